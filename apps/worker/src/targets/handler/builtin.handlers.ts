/** The built-in handlers: noop, echo, sleep (for tests and demos) and fail (configurable failures). */
import { Injectable } from '@nestjs/common';
import { parseDuration, type JsonValue } from '@kairos/domain';
import { Handles, HandlerError, type RunContext, type RunHandler } from './run-handler.js';

@Injectable()
@Handles('noop')
export class NoopHandler implements RunHandler<'noop'> {
  async run(): Promise<undefined> {
    return undefined;
  }
}

@Injectable()
@Handles('echo')
export class EchoHandler implements RunHandler<'echo'> {
  async run({ payload }: RunContext<JsonValue>): Promise<JsonValue> {
    return payload;
  }
}

@Injectable()
@Handles('sleep')
export class SleepHandler implements RunHandler<'sleep'> {
  async run({ payload, signal }: RunContext<{ ms: number | string }>): Promise<JsonValue> {
    let ms: number;
    try {
      ms = parseDuration(payload?.ms ?? 0);
    } catch (error) {
      throw new HandlerError(`sleep needs a payload like {"ms": 1500} or {"ms": "2s"}: ${(error as Error).message}`, false);
    }
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(resolve, ms);
      signal.addEventListener('abort', () => {
        clearTimeout(timer);
        reject(signal.reason as Error);
      }, { once: true });
    });
    return { sleptMs: ms };
  }
}

@Injectable()
@Handles('fail')
export class FailHandler implements RunHandler<'fail'> {
  async run({ payload, attempt }: RunContext<{ message?: string; retryable?: boolean; times?: number }>): Promise<JsonValue> {
    const times = payload?.times;
    if (times !== undefined && attempt > times) return { succeededOnAttempt: attempt };
    throw new HandlerError(payload?.message ?? 'failed on purpose', payload?.retryable ?? true);
  }
}

export const BUILTIN_HANDLERS = [NoopHandler, EchoHandler, SleepHandler, FailHandler];
