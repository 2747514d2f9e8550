/**
 * Multi-step definitions over REST and GraphQL: every refusal of a graph is a 400 naming the field
 * and stores nothing, on schedules and on runs alike; a schedule keeps its steps (PATCH and PUT
 * switch between a target and steps), fires a graph per slot with the graph frozen at creation,
 * and its overlap policy treats each graph's run as one unit.
 */
import { describe, expect, it } from 'vitest';
import { runInState, useKairos, waitFor } from '../support/kairos.js';

const echo = { type: 'handler', name: 'echo' };
const noop = { type: 'handler', name: 'noop' };
const step = (name: string, dependsOn: string[] = [], target: object = echo) => ({ name, dependsOn, target });
const chain = [step('extract'), step('transform', ['extract']), step('load', ['transform'])];

describe('multi-step definitions over the API', () => {
  const { t, client } = useKairos();

  const counts = async () => (await t.db.query('SELECT (SELECT count(*) FROM schedules)::int AS schedules, (SELECT count(*) FROM runs)::int AS runs')).rows[0];

  it.each([
    ['a cycle', [step('extract', ['transform']), step('transform', ['extract'])], 'VALIDATION_FAILED', 'steps', 'steps: cycle extract -> transform -> extract'],
    ['an unknown dependsOn', [step('extract'), step('transform', ['extract']), step('load', ['transfrom'])], 'VALIDATION_FAILED', 'steps[2].dependsOn[0]', 'steps[2].dependsOn[0]: no step is named "transfrom"; the steps are extract, transform, load'],
    ['a duplicate name', [step('extract'), step('extract')], 'VALIDATION_FAILED', 'steps[1].name', 'steps[1].name: "extract" is already the name of steps[0]; step names are unique in a run'],
    ['no steps', [], 'VALIDATION_FAILED', 'steps', 'steps must hold at least one step'],
    ['too many steps', Array.from({ length: 101 }, (_, i) => step(`s${i}`)), 'VALIDATION_FAILED', 'steps', 'steps holds at most 100 steps; split the job'],
    ['a name with capitals', [step('Extract')], 'VALIDATION_FAILED', 'steps[0].name', 'steps[0].name must be 1 to 64 lowercase letters, digits, "_" or "-"'],
    ['a step without a target', [{ name: 'extract' }], 'MISSING_FIELD', 'steps[0].target', /^steps\[0\]\.target is required/],
    ['an unknown field in a step', [{ ...step('extract'), after: ['x'] }], 'UNKNOWN_FIELD', 'steps[0].after', /unknown field "steps\[0\]\.after"/],
    ['an unknown when', [{ ...step('extract'), when: 'sometimes' }], 'VALIDATION_FAILED', 'steps[0].when', /one of "on_success", "always"/],
    ['an unknown handler in a step', [step('extract'), step('load', ['extract'], { type: 'handler', name: 'launch-missiles' })], 'UNKNOWN_HANDLER', 'steps[1].target.name', /no worker has registered a handler named "launch-missiles" on queue "default"/],
    ['a step calling a private address', [step('extract'), step('load', ['extract'], { type: 'http', url: 'http://10.0.0.7/load' })], 'INVALID_TARGET', 'steps[1].target.url', /private/],
  ])('refuses %s, on schedules and runs, storing nothing', async (_what, steps, code, field, message) => {
    const before = await counts();
    for (const [path, body] of [
      ['/v1/schedules', { every: '1h', steps }],
      ['/v1/runs', { steps }],
    ] as const) {
      const response = await client.post(path, body);
      expect(response.status, path).toBe(400);
      expect(response.body, path).toEqual({ code, field, message: typeof message === 'string' ? message : expect.stringMatching(message) });
    }
    expect(await counts()).toEqual(before);
  });

  it.each([
    ['both target and steps', { target: echo, steps: chain }, 'VALIDATION_FAILED', 'steps', /either target .* or steps .*, not both/],
    ['neither target nor steps', {}, 'MISSING_FIELD', 'target', /target is required: .*; or give steps/],
  ])('refuses %s', async (_what, body, code, field, message) => {
    const before = await counts();
    for (const [path, full] of [
      ['/v1/schedules', { every: '1h', ...body }],
      ['/v1/runs', body],
    ] as const) {
      const response = await client.post(path, full);
      expect(response.status, path).toBe(400);
      expect(response.body, path).toMatchObject({ code, field, message: expect.stringMatching(message) });
    }
    expect(await counts()).toEqual(before);
  });

  it('keeps a schedule\'s steps with their defaults; PATCH and PUT switch between a target and steps', async () => {
    const created = await client.post('/v1/schedules', {
      name: 'nightly-etl',
      cron: '0 2 * * *',
      timezone: 'Europe/Berlin',
      steps: [step('extract'), { ...step('transform', ['extract']), retry: { maxAttempts: 3 }, timeout: '10m' }, { ...step('cleanup', ['transform'], noop), when: 'always' }],
    });
    expect(created.status).toBe(201);
    expect(created.body.target).toBeNull();
    expect(created.body.steps).toEqual([
      { name: 'extract', dependsOn: [], when: 'on_success', target: { ...echo, queue: 'default' }, retry: null, timeout: null, concurrency: null, priority: null, fairness: null },
      {
        name: 'transform',
        dependsOn: ['extract'],
        when: 'on_success',
        target: { ...echo, queue: 'default' },
        retry: { maxAttempts: 3, backoff: { type: 'exponential', base: '1m', max: '1h', jitter: 0.1 } },
        timeout: '10m',
        concurrency: null,
        priority: null,
        fairness: null,
      },
      { name: 'cleanup', dependsOn: ['transform'], when: 'always', target: { ...noop, queue: 'default' }, retry: null, timeout: null, concurrency: null, priority: null, fairness: null },
    ]);
    const id = created.body.id as string;
    expect((await client.get(`/v1/schedules/${id}`)).body.steps).toEqual(created.body.steps);

    const toTarget = await client.patch(`/v1/schedules/${id}`, { target: noop });
    expect(toTarget.status).toBe(200);
    expect(toTarget.body).toMatchObject({ target: { ...noop, queue: 'default' }, steps: null });
    const toSteps = await client.patch(`/v1/schedules/${id}`, { steps: chain });
    expect(toSteps.body).toMatchObject({ target: null, steps: chain.map((s) => ({ name: s.name, dependsOn: s.dependsOn })) });
    const put = await client.put('/v1/schedules/by-name/nightly-etl', { cron: '0 2 * * *', timezone: 'Europe/Berlin', target: echo });
    expect(put.body).toMatchObject({ id, target: { ...echo, queue: 'default' }, steps: null });
    const versions = (await client.get(`/v1/schedules/${id}/versions`)).body.items;
    expect(versions[1].changes.map((c: { field: string }) => c.field)).toEqual(expect.arrayContaining(['steps']));
  });

  it("fires a graph per slot, frozen when the run is made, and its overlap policy holds each graph's run as one unit", async () => {
    const schedule = (
      await client.post('/v1/schedules', {
        every: '1s',
        overlap: 'skip',
        payload: { ms: 2_500 },
        steps: [step('first'), step('slow', ['first'], { type: 'handler', name: 'sleep' })],
      })
    ).body;
    const first = await waitFor(
      async () => (await client.get(`/v1/runs?scheduleId=${schedule.id}&state=running`)).body.items[0],
      'the first graph run to start',
    );
    // Editing the schedule changes later runs only.
    await client.patch(`/v1/schedules/${schedule.id}`, { steps: [step('other')] });
    const done = await runInState(client, first.id, 'succeeded', 20_000);
    expect(done.steps.map((s: { name: string }) => s.name)).toEqual(['first', 'slow']);
    expect(done.result).toEqual({ first: { ms: 2_500 }, slow: { sleptMs: 2_500 } });
    // While it ran (2.5 s), the slots of every second were skipped rather than started beside it.
    const ticks = (await client.get(`/v1/schedules/${schedule.id}/ticks?limit=100`)).body.items as { outcome: string; reasonCode: string }[];
    expect(ticks.filter((tk) => tk.reasonCode === 'OVERLAP_SKIPPED').length).toBeGreaterThanOrEqual(1);
    const later = await waitFor(async () => {
      const runs = (await client.get(`/v1/runs?scheduleId=${schedule.id}&state=succeeded`)).body.items as { id: string; steps: { name: string }[] }[];
      return runs.find((r) => r.id !== first.id);
    }, 'a later graph run', 15_000);
    expect(later.steps.map((s) => s.name)).toEqual(['other']);
    await client.delete(`/v1/schedules/${schedule.id}`);
  }, 40_000);

  it('creates and reads multi-step runs over GraphQL', async () => {
    const created = await client.post('/graphql', {
      query: `mutation($input: JSON!) { createRun(input: $input) { id target steps { name state dependsOn when } } }`,
      variables: { input: { steps: chain } },
    });
    expect(created.body.errors).toBeUndefined();
    expect(created.body.data.createRun).toMatchObject({ target: null, steps: [{ name: 'extract', state: 'queued' }, { name: 'transform', state: 'waiting', dependsOn: ['extract'] }, { name: 'load', state: 'waiting' }] });
    const done = await runInState(client, created.body.data.createRun.id, 'succeeded');
    expect(done.steps.map((s: { state: string }) => s.state)).toEqual(['succeeded', 'succeeded', 'succeeded']);
  });
});
