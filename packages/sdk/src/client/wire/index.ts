/**
 * The REST API's request and response shapes, as the client sends and receives them, one module
 * per area of the API. Every type the client uses is exported here, so they can be replaced
 * wholesale by types derived from the API's own schemas.
 */
export type * from './shared.js';
export type * from './runs.js';
export type * from './events.js';
export type * from './schedules.js';
export type * from './sensors.js';
export type * from './subscriptions.js';
export type * from './calendars.js';
export type * from './apply.js';
export type * from './workers.js';
