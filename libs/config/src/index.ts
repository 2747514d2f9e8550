/**
 * Kairos's configuration: the declaration of every environment variable, its reader, and the
 * documentation's table written from it. `@kairos/config/connections` (the ledger and the
 * transport) and `@kairos/config/worker` (what a worker reads) are leaves the SDK imports alone,
 * without the server's other variables.
 */
export * from './variables.js';
export * from './connections.js';
export * from './worker-config.js';
export * from './config.js';
export * from './config-table.js';
