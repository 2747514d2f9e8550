/** Kairos's configuration: the declaration of every environment variable, its reader, and the README table written from it. */
export * from './variables.js';
export * from './connections.js';
export * from './config.js';
export * from './config-table.js';
