export * from './jobs.js';
export * from './redis.js';
export * from './run-queues.js';
export * from './transport.js';
