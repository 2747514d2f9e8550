/** @kairos/sdk: run your own code on a Kairos cluster, call its API, and check its webhook signatures. */
export { KairosWorker, KairosWorkerError, type KairosWorkerOptions } from './worker/kairos-worker.js';
export type { HandlerContext, KairosHandlerFunction, SensorResult } from './worker/handler.js';
export { NonRetryableError } from './worker/non-retryable-error.js';
export { type DurableContext, type DurationInput, type ReceivedEvent, type StepOptions, type WaitForEventOptions } from './worker/durable-functions.js';
export type { WorkerLogger, WorkerObserver } from './worker/run-executor.js';
export type { HttpTargetCall } from './worker/target-runner.js';
export { ProtocolMismatchError, WORKER_PROTOCOL_VERSION, type ClaimedRun } from './worker/worker-protocol.js';
export { KairosHandler, KairosWorkerHost, KairosWorkerModule, type KairosWorkerModuleOptions } from './nest/kairos-worker.module.js';
export { KairosApiError, KairosClient, isRefusal, type KairosClientOptions } from './client/kairos-client.js';
export type * from './client/wire/index.js';
export { verifySignature, type SignatureCheck, type SignatureRefusal, type VerifySignatureOptions } from './signature/verify-signature.js';
