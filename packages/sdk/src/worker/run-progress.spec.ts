import { describe, expect, it } from 'vitest';
import { NonRetryableError } from './non-retryable-error.js';
import { progressJson, ProgressReporter } from './run-progress.js';

const tick = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A reporter whose writes are recorded, with an interval of 50 ms. */
function recorded(write: (json: string) => Promise<boolean> = async () => true) {
  const written: unknown[] = [];
  const warnings: string[] = [];
  const reporter = new ProgressReporter(
    (json) => {
      written.push(JSON.parse(json));
      return write(json);
    },
    (m) => warnings.push(m),
    50,
  );
  return { reporter, written, warnings };
}

describe('ctx.progress', () => {
  it('writes the first value at once and coalesces the rest to the latest per interval', async () => {
    const { reporter, written } = recorded();
    const first = reporter.report({ n: 1 });
    const superseded = reporter.report({ n: 2 });
    const last = reporter.report({ n: 3 });
    await first;
    await superseded;
    expect(written).toEqual([{ n: 1 }]);
    await last;
    expect(written).toEqual([{ n: 1 }, { n: 3 }]);
  });

  it('writes the latest value at once on flush, and nothing after close', async () => {
    const { reporter, written } = recorded();
    void reporter.report({ n: 1 });
    void reporter.report({ n: 2 });
    await reporter.close();
    expect(written).toEqual([{ n: 1 }, { n: 2 }]);
    await reporter.report({ n: 3 });
    await tick(80);
    expect(written).toEqual([{ n: 1 }, { n: 2 }]);
  });

  it('logs a failed write and resolves: the handler goes on', async () => {
    const { reporter, warnings } = recorded(async () => {
      throw new Error('connection refused');
    });
    await reporter.report({ n: 1 });
    expect(warnings).toEqual(['a progress report could not be stored: connection refused; the handler goes on']);
    await reporter.close();
  });

  it('refuses at the call a value that is not JSON or is over 64 KiB', () => {
    expect(() => progressJson({ blob: 'x'.repeat(64 * 1024) })).toThrow(NonRetryableError);
    expect(() => progressJson({ blob: 'x'.repeat(64 * 1024) })).toThrow(/at most 65536 bytes/);
    expect(() => progressJson(() => 1)).toThrow(/needs a JSON value; got function/);
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(() => progressJson(cyclic)).toThrow(/needs a JSON value/);
    expect(progressJson(undefined)).toBe('null');
    expect(progressJson({ at: new Date(0) })).toBe('{"at":"1970-01-01T00:00:00.000Z"}');
  });
});
