export * from './jobs.js';
export * from './redis.js';
export * from './run-queues.js';
export * from './shards.js';
export * from './supervised-worker.js';
export * from './transport-errors.js';
export * from './transport.js';
export * from './redis-acl.js';
