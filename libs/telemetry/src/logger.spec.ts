import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { withLogContext } from './log-context.js';
import { JsonLogger } from './logger.js';

function capture(level: 'error' | 'warn' | 'log' | 'debug' | 'verbose' = 'log'): { logger: JsonLogger; lines: () => Record<string, unknown>[] } {
  let text = '';
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      text += chunk.toString();
      done();
    },
  });
  const logger = new JsonLogger(level, 'scheduler,worker', sink);
  return { logger, lines: () => text.trim().split('\n').filter(Boolean).map((line) => JSON.parse(line) as Record<string, unknown>) };
}

describe('JsonLogger', () => {
  it.each<[string, (l: JsonLogger) => void, Record<string, unknown>]>([
    ['a plain message with its Nest context', (l) => l.log('started', 'Kairos'), { level: 'info', msg: 'started', context: 'Kairos' }],
    ['a warning', (l) => l.warn('careful', 'Reaper'), { level: 'warn', msg: 'careful', context: 'Reaper' }],
    ['an error with its stack', (l) => l.error('broke', 'Error: broke\n    at x', 'Api'), { level: 'error', msg: 'broke', stack: 'Error: broke\n    at x', context: 'Api' }],
    ['an Error object', (l) => l.error(new Error('boom'), 'Api'), { level: 'error', msg: 'boom', context: 'Api' }],
    ['a structured message, its fields beside msg', (l) => l.log({ msg: 'leading', epoch: 4 }, 'Leadership'), { level: 'info', msg: 'leading', epoch: 4, context: 'Leadership' }],
    ['verbose as trace', (l) => l.verbose('detail', 'X'), { level: 'trace', msg: 'detail' }],
    ['a message without a context', (l) => l.log('bare'), { level: 'info', msg: 'bare' }],
  ])('writes %s as one JSON line with level, time, msg and role', (_what, write, expected) => {
    const { logger, lines } = capture('verbose');
    write(logger);
    const [line, ...rest] = lines();
    expect(rest).toEqual([]);
    expect(line).toMatchObject({ ...expected, role: 'scheduler,worker', pid: process.pid });
    expect(new Date(line!.time as string).toISOString()).toBe(line!.time);
  });

  it.each<['error' | 'warn' | 'log' | 'debug', string[]]>([
    ['error', ['error']],
    ['warn', ['error', 'warn']],
    ['log', ['error', 'warn', 'info']],
    ['debug', ['error', 'warn', 'info', 'debug']],
  ])('LOG_LEVEL=%s keeps only %j', (level, kept) => {
    const { logger, lines } = capture(level);
    logger.error('e', 'X');
    logger.warn('w', 'X');
    logger.log('l', 'X');
    logger.debug('d', 'X');
    logger.verbose('v', 'X');
    expect(lines().map((l) => l.level)).toEqual(kept);
  });

  it("drops Nest's start-up chatter", () => {
    const { logger, lines } = capture();
    logger.log('Mapped {/v1/runs, GET} route', 'RouterExplorer');
    logger.log('ApiModule dependencies initialized', 'InstanceLoader');
    expect(lines()).toEqual([]);
  });

  it('adds the log context to every line logged inside it, across awaits, and nests', async () => {
    const { logger, lines } = capture();
    await withLogContext({ requestId: 'req-1' }, async () => {
      await new Promise((r) => setTimeout(r, 1));
      logger.log('outer', 'Http');
      await withLogContext({ runId: 'run-1', scheduleId: 'sch-1', namespace: 'ns-1', epoch: 7 }, async () => {
        await Promise.resolve();
        logger.warn({ msg: 'inner', epoch: 8 }, 'RunExecutor');
      });
    });
    logger.log('after', 'Http');
    expect(lines()).toEqual([
      expect.objectContaining({ msg: 'outer', requestId: 'req-1' }),
      expect.objectContaining({ msg: 'inner', requestId: 'req-1', runId: 'run-1', scheduleId: 'sch-1', namespace: 'ns-1', epoch: 8 }),
      expect.not.objectContaining({ requestId: expect.anything() }),
    ]);
  });

  it('never writes payloads, results or secrets, whatever a call site passes', () => {
    const { logger, lines } = capture();
    logger.log({ msg: 'oops', payload: { card: '4111' }, result: 'r', secret: 's', signingSecret: 'k', authorization: 'Bearer x', headers: { a: 1 }, run: { payload: 1, result: 2, id: 'x' } }, 'X');
    const [line] = lines();
    expect(line).toEqual(expect.objectContaining({ msg: 'oops', run: { id: 'x' } }));
    expect(JSON.stringify(line)).not.toMatch(/4111|Bearer|"secret"|signingSecret|"payload"|"result"|headers/);
  });
});
