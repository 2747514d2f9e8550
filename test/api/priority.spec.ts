/**
 * Priority and fair share over REST: schedules, ad-hoc runs, batch items, steps and a sensor's
 * runs take `priority` (1..5, default 3) and `fairness` ({ key template, weight 1..100, default 1 });
 * a run shows its priority and its resolved fairness key, a schedule's runs inherit both, a step
 * takes its own or its run's; every refusal is a 400 naming the field, and stores nothing.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { useKairos } from '../support/kairos.js';

/** A queue no worker serves: runs stay queued. */
const target = { type: 'handler', name: 'noop', queue: 'nobody' };
const later = () => new Date(Date.now() + 3_600_000).toISOString();

describe('priority and fair share over REST', () => {
  const { t, client } = useKairos({ roles: ['api'] });

  beforeAll(async () => {
    // A worker of the queue registered its handler, and claims nothing.
    await t.db.query(`INSERT INTO workers (id, queue, handlers, version, started_at, last_seen_at) VALUES ('host:1:nobody', 'nobody', '{noop}', 'v1', now(), now())`);
  });

  const count = async (table: string) => (await t.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`)).rows[0]!.n;

  it('gives an ad-hoc run its priority and resolved fairness key, and the defaults without them', async () => {
    const urgent = await client.post('/v1/runs', { target, payload: { tenantId: 't-1' }, priority: 1, fairness: { key: 'tenant-{{payload.tenantId}}', weight: 5 } });
    expect(urgent.status, JSON.stringify(urgent.body)).toBe(201);
    expect(urgent.body).toMatchObject({ priority: 1, fairnessKey: 'tenant-t-1' });
    const { rows } = await t.db.query(`SELECT priority, fairness_key, fairness_weight, fair FROM runs WHERE id = $1`, [urgent.body.id]);
    expect(rows[0]).toEqual({ priority: 1, fairness_key: 'tenant-t-1', fairness_weight: 5, fair: true });

    const plain = await client.post('/v1/runs', { target, availableAt: later() });
    expect(plain.body).toMatchObject({ priority: 3, fairnessKey: null });
    expect((await client.get(`/v1/runs/${plain.body.id}`)).body).toMatchObject({ priority: 3, fairnessKey: null });
  });

  it('waits its turn in the backlog while its queue has no worker, then leaves it when cancelled', async () => {
    const runs = [];
    for (let i = 0; i < 3; i++) runs.push((await client.post('/v1/runs', { target, payload: { i }, fairness: { key: 'k' } })).body);
    // The window takes them all (no worker claims any); none is held.
    for (const run of runs) expect(run.deferReason).toBeNull();
    const { rows } = await t.db.query<{ held: number; keys: number }>(
      `SELECT (SELECT count(*)::int FROM runs WHERE defer_reason = 'FAIR_SHARE') AS held, (SELECT count(*)::int FROM fair_keys) AS keys`,
    );
    expect(rows[0]).toEqual({ held: 0, keys: 0 });
    for (const run of runs) expect((await client.post(`/v1/runs/${run.id}/cancel`, {})).status).toBeLessThan(300);
  });

  it("gives a schedule's runs its priority and fairness, each run its key over the payload", async () => {
    const created = await client.post('/v1/schedules', {
      every: '1h',
      target,
      payload: { account: 'acme' },
      priority: 2,
      fairness: { key: 'account-{{payload.account}}' },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body).toMatchObject({ priority: 2, fairness: { key: 'account-{{payload.account}}', weight: 1 } });
    const triggered = await client.post(`/v1/schedules/${created.body.id}/trigger`, {});
    expect(triggered.status, JSON.stringify(triggered.body)).toBeLessThan(300);
    const runId = triggered.body.id ?? triggered.body.run?.id;
    expect((await client.get(`/v1/runs/${runId}`)).body).toMatchObject({ priority: 2, fairnessKey: 'account-acme' });

    // PATCH changes them; a schedule without them shows the defaults.
    const patched = await client.patch(`/v1/schedules/${created.body.id}`, { priority: 4, fairness: null });
    expect(patched.body).toMatchObject({ priority: 4, fairness: null });
    const plain = await client.post('/v1/schedules', { every: '1h', target });
    expect(plain.body).toMatchObject({ priority: 3, fairness: null });
  });

  it('lets a step take its own priority and fairness, or its run’s', async () => {
    const created = await client.post('/v1/runs', {
      steps: [
        { name: 'first', target },
        { name: 'second', dependsOn: ['first'], target, priority: 1, fairness: { key: 'step-{{payload.x}}', weight: 2 } },
      ],
      payload: { x: 'y' },
      priority: 5,
      fairness: { key: 'run-{{payload.x}}' },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const { rows } = await t.db.query(`SELECT step_name, priority, fairness_key, fairness_weight FROM runs WHERE parent_run_id = $1 ORDER BY step_name`, [created.body.id]);
    expect(rows).toEqual([
      { step_name: 'first', priority: 5, fairness_key: 'run-y', fairness_weight: 1 },
      { step_name: 'second', priority: 1, fairness_key: 'step-y', fairness_weight: 2 },
    ]);
    const schedule = await client.post('/v1/schedules', {
      every: '1h',
      steps: [{ name: 'only', target, priority: 2, fairness: { key: 'k', weight: 3 } }],
    });
    expect(schedule.body.steps[0]).toMatchObject({ priority: 2, fairness: { key: 'k', weight: 3 } });
  });

  it("gives a sensor's runs their priority and fairness", async () => {
    const created = await client.post('/v1/sensors', {
      name: 'prio-sensor',
      every: '1h',
      target: { type: 'handler', name: 'noop' },
      run: { target, priority: 1, fairness: { key: 'p-{{payload.p}}', weight: 4 } },
      paused: true,
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body.run).toMatchObject({ priority: 1, fairness: { key: 'p-{{payload.p}}', weight: 4 } });
  });

  it('takes them in batch items, each refused on its own', async () => {
    const answer = await client.post('/v1/runs/batch', {
      items: [
        { target, availableAt: later(), priority: 4 },
        { target, availableAt: later(), priority: 9 },
      ],
    });
    expect(answer.status).toBe(200);
    expect(answer.body.items[0]).toMatchObject({ priority: 4 });
    expect(answer.body.items[1].error).toMatchObject({ code: 'VALIDATION_FAILED', field: 'priority' });
  });

  it.each([
    [{ priority: 0 }, 'priority'],
    [{ priority: 6 }, 'priority'],
    [{ priority: 2.5 }, 'priority'],
    [{ priority: '1' }, 'priority'],
    [{ fairness: {} }, 'fairness.key'],
    [{ fairness: { weight: 2 } }, 'fairness.key'],
    [{ fairness: { key: '' } }, 'fairness.key'],
    [{ fairness: { key: 'k', weight: 0 } }, 'fairness.weight'],
    [{ fairness: { key: 'k', weight: 101 } }, 'fairness.weight'],
    [{ fairness: { key: 'k', weight: 1.5 } }, 'fairness.weight'],
    [{ fairness: { key: 'k-{{nope}}' } }, 'fairness.key'],
    [{ fairness: { key: 'k-{{payload.missing}}' } }, 'fairness.key'],
    [{ fairness: 'tenant' }, 'fairness'],
    [{ fairness: { key: 'k', extra: 1 } }, 'fairness.extra'],
  ])('refuses %j on runs and schedules with a 400 naming %s, storing nothing', async (fields, field) => {
    const [runs, schedules] = [await count('runs'), await count('schedules')];
    const run = await client.post('/v1/runs', { target, payload: {}, ...fields });
    expect(run.status, JSON.stringify(run.body)).toBe(400);
    expect(run.body.field).toBe(field);
    expect(run.body.message).toContain(field);
    const schedule = await client.post('/v1/schedules', { every: '1h', target, payload: {}, ...fields });
    expect(schedule.status, JSON.stringify(schedule.body)).toBe(400);
    expect(schedule.body.field).toBe(field);
    expect([await count('runs'), await count('schedules')]).toEqual([runs, schedules]);
  });

  it('refuses a step priority out of range naming the step', async () => {
    const answer = await client.post('/v1/runs', { steps: [{ name: 'a', target, priority: 7 }] });
    expect(answer.status).toBe(400);
    expect(answer.body.field).toBe('steps[0].priority');
  });
});
