/**
 * Handlers: named functions a run can target, registered in the worker. Each handler is bound to
 * its name in the catalogue (@kairos/domain handlers.ts) and receives exactly that name's payload.
 */
import { SetMetadata } from '@nestjs/common';
import type { HandlerName, HandlerPayloads, JsonValue } from '@kairos/domain';

export interface RunContext<P> {
  runId: string;
  scheduleId: string | null;
  scheduledFor: Date;
  attempt: number;
  payload: P;
  /** Aborted on cancellation, timeout, lease loss or shutdown; long handlers must honour it. */
  signal: AbortSignal;
}

export interface RunHandler<N extends HandlerName> {
  run(context: RunContext<HandlerPayloads[N]>): Promise<JsonValue | undefined>;
}

/** Thrown by a handler to fail the attempt; `retryable: false` sends the run straight to dead. */
export class HandlerError extends Error {
  constructor(
    message: string,
    readonly retryable = true,
  ) {
    super(message);
    this.name = 'HandlerError';
  }
}

export const RUN_HANDLER_NAME = 'kairos:run-handler';

/** Registers the decorated provider as the implementation of handler `name`. */
export const Handles = (name: HandlerName): ClassDecorator => SetMetadata(RUN_HANDLER_NAME, name);
