/**
 * Structured logs: a Kairos process whose stdout is not a terminal writes every stdout line, the
 * start-up banner included, as one JSON object with level, time, msg and role; API requests get an
 * access-log line; no colour codes and no payloads reach the log.
 */
import { describe, expect, it } from 'vitest';
import { api, spawnKairos, useTestEnvironment, waitFor } from '../support/kairos.js';

const MARKER = 'payload-that-must-never-be-logged';

describe('JSON logs', () => {
  const t = useTestEnvironment();

  it('writes every stdout line as JSON, with the banner, access log and leadership epoch', async () => {
    const child = spawnKairos('kairos', t.env({ LOG_LEVEL: 'log' }));
    let stdout = '';
    child.process.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    try {
      const base = await child.ready;
      const client = api(base);
      const created = await client.post('/v1/schedules', {
        name: 'logged',
        every: '1s',
        target: { type: 'handler', name: 'echo' },
        payload: { secret: MARKER },
      });
      expect(created.status).toBe(201);
      expect((await client.get('/v1/runs/not-a-uuid')).status).toBe(404);
      const res = await fetch(`${base}/v1/schedules`, { headers: { 'x-request-id': 'trace-me-42' } });
      expect(res.status).toBe(200);
      await waitFor(async () => ((await client.get(`/v1/runs?scheduleId=${created.body.id}&state=succeeded`)).body.items.length > 0 ? true : undefined), 'a run');
    } finally {
      child.process.kill('SIGTERM');
    }
    expect(await child.exited).toBe(0);

    const lines = stdout.split('\n').filter((l) => l !== '');
    expect(lines.length).toBeGreaterThan(5);
    const records = lines.map((line) => {
      expect(() => JSON.parse(line), line).not.toThrow();
      return JSON.parse(line) as Record<string, unknown>;
    });
    for (const record of records) {
      expect(record).toMatchObject({ level: expect.stringMatching(/^(fatal|error|warn|info|debug|trace)$/), msg: expect.any(String), role: 'api,scheduler,worker' });
      expect(new Date(record.time as string).toISOString()).toBe(record.time);
    }
    expect(stdout).not.toContain('\u001b[');
    expect(stdout).not.toContain(MARKER);

    expect(records).toContainEqual(expect.objectContaining({ msg: 'Kairos all-in-one is up', health: expect.stringMatching(/\/health\/ready$/), rest: expect.stringMatching(/\/v1\/schedules$/) }));
    expect(records).toContainEqual(expect.objectContaining({ context: 'Leadership', msg: expect.stringMatching(/^leading as /), epoch: 1 }));
    const access = records.filter((r) => r.context === 'Http');
    expect(access).toContainEqual(expect.objectContaining({ method: 'POST', path: '/v1/schedules', status: 201, durationMs: expect.any(Number), requestId: expect.any(String), namespace: expect.any(String) }));
    expect(access).toContainEqual(expect.objectContaining({ method: 'GET', path: '/v1/runs/not-a-uuid', status: 404 }));
    expect(access).toContainEqual(expect.objectContaining({ method: 'GET', path: '/v1/schedules', status: 200, requestId: 'trace-me-42' }));
    expect(records).toContainEqual(expect.objectContaining({ msg: 'SIGTERM: shutting down' }));
  });

  it('keeps readable lines under LOG_FORMAT=pretty', async () => {
    const child = spawnKairos('scheduler', t.env({ LOG_LEVEL: 'log', LOG_FORMAT: 'pretty' }));
    try {
      const base = await child.ready;
      expect(child.output()).toContain(`  Health      ${base}/health/ready`);
      expect(child.output()).toMatch(/\[Kairos\] .*roles scheduler running on postgres 127\.0\.0\.1:5432\/\S+ with the (redis|postgres) .*transport/);
      expect(child.output()).toMatch(/^ {2}Database {4}postgres 127\.0\.0\.1:5432\/\S+$/m);
    } finally {
      child.process.kill('SIGTERM');
    }
    expect(await child.exited).toBe(0);
  });
});
