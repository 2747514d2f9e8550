export * from './bootstrap.js';
export * from './core.module.js';
export * from './health/health.module.js';
export * from './tokens.js';
export * from './loop.js';
export * from './logger.js';
export * from './micro-batcher.js';
