/** @kairos/sdk: run your own code on a Kairos cluster, call its API, and check its webhook signatures. */
export { KairosWorker, KairosWorkerError, type KairosWorkerOptions } from './worker/kairos-worker.js';
export { NonRetryableError, type HandlerContext, type KairosHandlerFunction } from './worker/handler.js';
export type { WorkerLogger, WorkerObserver } from './worker/run-executor.js';
export type { HttpTargetCall } from './worker/target-runner.js';
