/**
 * The REST wire shapes the dashboard reads (the API's /v1 contract, as far as the pages use it), one
 * module per area. A hand-kept copy, because the page must not bundle zod; test/ui/wire-types.spec.ts
 * has the compiler hold it to the declarations in libs/domain/src/wire (every response fits these
 * types, and no field here is wider than the one the API sends), and `npm run lint` type-checks that file.
 */
export type * from './shared.js';
export type * from './events.js';
export type * from './schedules.js';
export type * from './runs.js';
export type * from './cluster.js';
export type * from './sensors.js';
export type * from './subscriptions.js';
export type * from './calendars.js';
