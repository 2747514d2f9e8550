/** Kairos's pure domain: time, slot planning, policies, state sets and reason codes. No I/O. */
export * from './errors.js';
export * from './handlers.js';
export * from './ids.js';
export * from './input.js';
export * from './model.js';
export * from './overlap.js';
export * from './reason-codes.js';
export * from './run-policy.js';
export * from './schedule-spec.js';
export * from './slot-planner.js';
export * from './time/index.js';
export * from './verdict.js';
export * from './run-spec.js';
export * from './preview.js';
export * from './attempts.js';
export * from './api-keys.js';
export * from './instants.js';
