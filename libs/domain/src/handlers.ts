/**
 * The catalogue of built-in handlers: each name and the payload it takes. The worker registers one
 * implementation per name (apps/worker/src/targets/handler); the API refuses any other name at
 * declaration, so the two sides cannot drift apart.
 */
import type { JsonValue } from './model.js';

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

export function isHandlerName(name: string): name is HandlerName {
  return (HANDLER_NAMES as readonly string[]).includes(name);
}
