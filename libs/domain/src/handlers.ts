/**
 * Handler names and queues. The built-in handlers (each name and the payload it takes) ship with
 * the built-in worker, which serves the default queue; every other handler is a user's function,
 * registered by the worker that runs it. The API accepts a handler target only when its name is
 * built in (on the default queue) or a worker has registered it on the target's queue.
 */
import type { JsonValue } from './closed-sets.js';

export interface HandlerPayloads {
  /** Does nothing and succeeds. */
  noop: JsonValue;
  /** Succeeds with its payload as the result. */
  echo: JsonValue;
  /** Sleeps `ms` milliseconds (or a duration string such as "2s"), honouring cancellation. */
  sleep: { ms: number | string };
  /**
   * Fails with `message`. `retryable: false` makes the failure final; `times: n` fails only the
   * first n attempts and then succeeds, which is what retry tests need.
   */
  fail: { message?: string; retryable?: boolean; times?: number };
}

export type HandlerName = keyof HandlerPayloads;

export const HANDLER_NAMES: readonly HandlerName[] = ['noop', 'echo', 'sleep', 'fail'];

/** The queue a handler target names when it names none; the built-in worker serves it, with every HTTP target. */
export const DEFAULT_QUEUE = 'default';

/** What a queue name and a handler name may be: they become BullMQ queue names and registry keys. */
export const QUEUE_NAME_PATTERN = /^[A-Za-z0-9_.-]{1,64}$/;
export const HANDLER_NAME_PATTERN = /^[A-Za-z0-9_.-]{1,128}$/;

/** The handlers known on `queue` before any worker registers: the built-in ones, on the default queue. */
export function builtInHandlersOf(queue: string): readonly string[] {
  return queue === DEFAULT_QUEUE ? HANDLER_NAMES : [];
}
