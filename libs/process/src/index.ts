/**
 * A Kairos process: `startKairos` builds one for its roles on the shared resources (pool, transport,
 * queues, DI tokens), with health checks and metrics; `Loop`/`GatedLoops` run its background work.
 * `@kairos/process/loop`, `@kairos/process/process-identity` and `@kairos/process/run-dispatcher` are
 * leaves the SDK imports alone.
 */
export * from './bootstrap.js';
export * from './core.module.js';
export * from './health/health.module.js';
export * from './metrics/kairos-metrics.service.js';
export * from './metrics/metrics.module.js';
export * from './tokens.js';
export * from './loop.js';
export * from './public-route.js';
export * from './process-identity.js';
export * from './run-dispatcher.js';
export * from './signed-webhook.js';
