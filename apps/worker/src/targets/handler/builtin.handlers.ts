/**
 * The built-in handlers: noop, echo, sleep (for tests and demos) and fail (configurable failures).
 * Typed against the catalogue in @kairos/domain, so a name without its implementation (or the
 * reverse) does not compile.
 */
import { parseDuration, type HandlerName, type HandlerPayloads } from '@kairos/domain';
import { NonRetryableError, type KairosHandlerFunction } from '@kairos/sdk';

export const BUILT_IN_HANDLERS: { [N in HandlerName]: KairosHandlerFunction<HandlerPayloads[N]> } = {
  noop: () => undefined,
  echo: ({ payload }) => payload,
  sleep: async ({ payload, signal }) => {
    let ms: number;
    try {
      ms = parseDuration(payload?.ms ?? 0);
    } catch (error) {
      throw new NonRetryableError(`sleep needs a payload like {"ms": 1500} or {"ms": "2s"}: ${(error as Error).message}`);
    }
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(resolve, ms);
      signal.addEventListener('abort', () => {
        clearTimeout(timer);
        reject(signal.reason as Error);
      }, { once: true });
    });
    return { sleptMs: ms };
  },
  fail: ({ payload, attempt }) => {
    const times = payload?.times;
    if (times !== undefined && attempt > times) return { succeededOnAttempt: attempt };
    const message = payload?.message ?? 'failed on purpose';
    throw payload?.retryable === false ? new NonRetryableError(message) : new Error(message);
  },
};
