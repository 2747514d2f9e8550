/**
 * Flow control of schedules started by events (debounce, throttle, rateLimit, batch), end to end on
 * the real ledger and transport. Debounce: a burst per key makes one run with its last event; a
 * steady stream makes a run about every maxWait; the leader killed with -9 inside a window changes
 * nothing (the window is a queued run with a delayed job): one run, started on time. Throttle: every
 * event runs, never more than `limit` starts in any window of `period` (judged from the ledger's
 * started_at, exactly), across two worker processes and one killed with -9; the runs that wait say
 * THROTTLED. Rate limit: `limit` runs per window, the other events skipped RATE_LIMITED, and the
 * next window admits again. Batch: events gathered into runs of maxSize and a last one after the
 * timeout, each event in exactly one run, also across an API and a leader killed with -9 between
 * sends. Refusals name the field and store nothing.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../../apps/cli/src/cli.js';
import {
  api,
  runInState,
  sleep,
  SPAWNING_TIMEOUT_MS,
  spawnKairos,
  useKairos,
  useTestEnvironment,
  waitFor,
  type ApiClient,
  type KairosChild,
  type TestEnvironment,
} from '../support/kairos.js';

const echo = { type: 'handler', name: 'echo' };

interface EventView {
  id: string;
  name: string;
  receivedAt: string;
  deduped: boolean;
  runs: string[];
  skipped: { scheduleId: string; reasonCode: string }[];
}

interface EventBody {
  id: string;
  name: string;
  data: any;
  receivedAt: string;
}

let unique = 0;
const fresh = (prefix: string): string => `${prefix}.${++unique}`;

async function listen(client: ApiClient, event: string, fields: Record<string, unknown>): Promise<any> {
  const created = await client.post('/v1/schedules', { name: fresh('flow'), on: { event }, target: echo, ...fields });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return created.body;
}

async function send(client: ApiClient, name: string, data: unknown, id?: string): Promise<EventView> {
  const answer = await client.post('/v1/events', { name, data, ...(id ? { id } : {}) });
  expect(answer.status, JSON.stringify(answer.body)).toBe(202);
  return answer.body;
}

/** The runs of a schedule in the ledger, oldest first, with their start in microseconds. */
async function runsOf(t: TestEnvironment, scheduleId: string): Promise<{ id: string; state: string; payload: any; createdAt: Date; availableAt: Date | null; startedAtUs: number | null; deferReason: string | null }[]> {
  const { rows } = await t.db.query(
    `SELECT id, state, payload, created_at AS "createdAt", available_at AS "availableAt", defer_reason AS "deferReason",
            (extract(epoch FROM started_at) * 1000000)::bigint::text AS "startedAtUs"
     FROM runs WHERE schedule_id = $1 ORDER BY created_at, id`,
    [scheduleId],
  );
  return rows.map((r) => ({ ...r, startedAtUs: r.startedAtUs === null ? null : Number(r.startedAtUs) }));
}

/** Waits until the schedule has `count` runs, every one of them succeeded. */
async function allSucceeded(t: TestEnvironment, scheduleId: string, count: number, timeoutMs = 30_000): Promise<Awaited<ReturnType<typeof runsOf>>> {
  return waitFor(
    async () => {
      const runs = await runsOf(t, scheduleId);
      return runs.length === count && runs.every((r) => r.state === 'succeeded') ? runs : undefined;
    },
    `${count} succeeded runs of schedule ${scheduleId}`,
    timeoutMs,
    200,
  );
}

/** The `event_gathered` run events of a run, as the API lists them. */
async function gathered(client: ApiClient, runId: string): Promise<{ eventId: string; control: string }[]> {
  const events = await client.get(`/v1/runs/${runId}/events`);
  expect(events.status).toBe(200);
  return (events.body.items as { kind: string; detail: any }[]).filter((e) => e.kind === 'event_gathered').map((e) => e.detail);
}

describe('flow control, in one process', () => {
  const { t, kairos, client } = useKairos();
  /** `kairos explain <run>`'s lines. */
  const explain = async (runId: string): Promise<string[]> => {
    const lines: string[] = [];
    const code = await runCli(['explain', runId], { line: (l) => lines.push(l) }, { DATABASE_URL: t.databaseUrl, KAIROS_URL: kairos.url });
    expect(code).toBe(0);
    return lines;
  };
  const count = async (sql: string, params: unknown[] = []): Promise<number> => (await t.db.query(`SELECT count(*)::int AS n FROM ${sql}`, params)).rows[0].n;

  describe('refusals', () => {
    const on = { on: { event: 'refused.event' } };
    it.each<[string, Record<string, unknown>, string, string]>([
      ['a debounce without period', { ...on, debounce: { maxWait: '5m' } }, 'MISSING_FIELD', 'debounce.period'],
      ['a throttle of limit 0', { ...on, throttle: { limit: 0, period: '1m' } }, 'VALIDATION_FAILED', 'throttle.limit'],
      ['a rate limit without period', { ...on, rateLimit: { limit: 10 } }, 'MISSING_FIELD', 'rateLimit.period'],
      ['a batch of maxSize 1001', { ...on, batch: { maxSize: 1001, timeout: '5s' } }, 'VALIDATION_FAILED', 'batch.maxSize'],
      ['a batch of maxSize 0', { ...on, batch: { maxSize: 0, timeout: '5s' } }, 'VALIDATION_FAILED', 'batch.maxSize'],
      ['an unknown field in a rate limit', { ...on, rateLimit: { limit: 10, period: '1m', burst: 3 } }, 'UNKNOWN_FIELD', 'rateLimit.burst'],
      ['an unknown field in a debounce', { ...on, debounce: { period: '1s', leading: true } }, 'UNKNOWN_FIELD', 'debounce.leading'],
      ['a key naming no event field', { ...on, throttle: { key: '{{nothing.here}}', limit: 1, period: '1s' } }, 'VALIDATION_FAILED', 'throttle.key'],
      ['a debounce on a cron schedule', { cron: '0 9 * * *', debounce: { period: '30s' } }, 'CONFLICTING_FIELDS', 'debounce'],
      ['a throttle on an every schedule', { every: '1m', throttle: { limit: 1, period: '1m' } }, 'CONFLICTING_FIELDS', 'throttle'],
      ['a rate limit on a cron schedule', { cron: '0 9 * * *', rateLimit: { limit: 1, period: '1m' } }, 'CONFLICTING_FIELDS', 'rateLimit'],
      ['a batch on a cron schedule', { cron: '0 9 * * *', batch: { maxSize: 10, timeout: '5s' } }, 'CONFLICTING_FIELDS', 'batch'],
      ['debounce with batch', { ...on, debounce: { period: '1s' }, batch: { maxSize: 10, timeout: '5s' } }, 'CONFLICTING_FIELDS', 'batch'],
      ['throttle with debounce', { ...on, debounce: { period: '1s' }, throttle: { limit: 1, period: '1m' } }, 'CONFLICTING_FIELDS', 'throttle'],
      ['throttle with batch', { ...on, batch: { maxSize: 10, timeout: '5s' }, throttle: { limit: 1, period: '1m' } }, 'CONFLICTING_FIELDS', 'throttle'],
    ])('refuses %s, naming the field and storing nothing', async (_what, fields, code, field) => {
      const before = await count('schedules');
      const answer = await client.post('/v1/schedules', { name: fresh('refused'), target: echo, ...fields });
      expect(answer.status, JSON.stringify(answer.body)).toBe(400);
      expect(answer.body).toMatchObject({ code, field });
      expect(await count('schedules')).toBe(before);
    });

    it('shows the controls it stored, and an event schedule defaults to overlap allow', async () => {
      const created = await listen(client, 'shown.event', {
        debounce: { key: 'account-{{event.data.accountId}}', period: '30s', maxWait: '5m' },
        rateLimit: { limit: 10, period: '1m' },
      });
      expect(created).toMatchObject({
        overlap: 'allow',
        debounce: { key: 'account-{{event.data.accountId}}', period: '30s', maxWait: '5m' },
        rateLimit: { key: null, limit: 10, period: '1m' },
        throttle: null,
        batch: null,
      });
      expect((await client.get(`/v1/schedules/${created.id}`)).body).toMatchObject({ debounce: created.debounce, rateLimit: created.rateLimit });
    });
  });

  describe('debounce', () => {
    it('makes one run per key from a burst, carrying the last event, with each other event recorded as gathered', async () => {
      const name = fresh('account.changed');
      const schedule = await listen(client, name, { payload: { kind: 'sync' }, debounce: { key: 'account-{{event.data.accountId}}', period: '1500ms' } });
      const sent: Record<string, EventView[]> = { a: [], b: [] };
      for (let i = 0; i < 6; i++) {
        for (const account of ['a', 'b']) sent[account]!.push(await send(client, name, { accountId: account, i }));
        await sleep(60);
      }
      const unresolved = await send(client, name, { other: true });
      expect(unresolved.runs).toEqual([]);
      expect(unresolved.skipped).toEqual([{ scheduleId: schedule.id, reasonCode: 'FLOW_KEY_UNRESOLVED' }]);

      const runIdOf: Record<string, string> = {};
      for (const account of ['a', 'b']) {
        const runIds = new Set(sent[account]!.flatMap((e) => e.runs));
        expect(runIds.size, `the runs of account ${account}'s events`).toBe(1);
        runIdOf[account] = [...runIds][0]!;
        // Inside its window, the run waits queued, saying why.
        const waiting = (await client.get(`/v1/runs/${runIdOf[account]}`)).body;
        expect(waiting).toMatchObject({ state: 'queued', deferReason: 'DEBOUNCED', origin: 'event' });
      }
      expect(runIdOf.a).not.toBe(runIdOf.b);
      for (const account of ['a', 'b']) {
        const events = sent[account]!;
        const runId = runIdOf[account];
        const run = await runInState(client, runId!);
        expect(run.state).toBe('succeeded');
        expect(run.eventId).toBe(events.at(-1)!.id);
        expect(run.payload).toMatchObject({ kind: 'sync', event: { id: events.at(-1)!.id, name, data: { accountId: account, i: 5 } } });
        expect(run.result).toEqual(run.payload);
        // The start came once the period passed after the last event.
        expect(Date.parse(run.startedAt)).toBeGreaterThanOrEqual(Date.parse(events.at(-1)!.receivedAt) + 1_500 - 5);
        expect(await gathered(client, runId!)).toEqual(events.slice(1).map((e) => ({ eventId: e.id, control: 'debounce' })));
      }
      // kairos explain tells each event the window gathered, in words.
      const told = (await explain(runIdOf.a!)).filter((l) => l.includes('event_gathered'));
      expect(told).toHaveLength(5);
      for (const [i, line] of told.entries()) expect(line).toContain(`gathered event ${sent.a![i + 1]!.id} by its debounce (the run now carries it, the last event)`);
      await sleep(500);
      expect(await runsOf(t, schedule.id)).toHaveLength(2);

      // After the run, the key's next event opens a new window.
      const later = await send(client, name, { accountId: 'a', i: 6 });
      expect(later.runs).toHaveLength(1);
      expect(later.runs[0]).not.toBe(sent.a![0]!.runs[0]);
      expect((await runInState(client, later.runs[0]!)).payload.event.data).toEqual({ accountId: 'a', i: 6 });
    });

    it('makes a run about every maxWait of a steady stream, every event in exactly one of them', async () => {
      const name = fresh('metric.sample');
      const schedule = await listen(client, name, { debounce: { period: '1s', maxWait: '1s' } });
      const sent: EventView[] = [];
      const began = Date.now();
      while (Date.now() - began < 3_000) {
        sent.push(await send(client, name, { n: sent.length }));
        await sleep(200);
      }
      const stopped = Date.now();
      await waitFor(async () => ((await runsOf(t, schedule.id)).every((r) => r.state === 'succeeded') ? true : undefined), 'the runs to end', 30_000);
      const runs = await runsOf(t, schedule.id);
      const spanMs = stopped - began;
      // One run per maxWait of stream, give or take the window the stream ended in.
      expect(runs.length, `${runs.length} runs for a stream of ${spanMs} ms`).toBeGreaterThanOrEqual(Math.floor(spanMs / 1_000) - 1);
      expect(runs.length).toBeLessThanOrEqual(Math.ceil(spanMs / 1_000) + 1);
      const byRun = new Map<string, string[]>();
      for (const e of sent) {
        expect(e.runs).toHaveLength(1);
        byRun.set(e.runs[0]!, [...(byRun.get(e.runs[0]!) ?? []), e.id]);
      }
      expect([...byRun.keys()].sort()).toEqual(runs.map((r) => r.id).sort());
      for (const run of runs) {
        const ids = byRun.get(run.id)!;
        // Each run carries the last event of its window, and started about maxWait after its first.
        expect(run.payload.event.id).toBe(ids.at(-1));
        const first = sent.find((e) => e.id === ids[0])!;
        const waitedMs = run.startedAtUs! / 1_000 - Date.parse(first.receivedAt);
        expect(waitedMs, `run ${run.id} started ${waitedMs} ms after its first event`).toBeGreaterThanOrEqual(1_000 - 5);
        expect(waitedMs).toBeLessThan(1_000 + 2_000);
        expect((await gathered(client, run.id)).map((g) => g.eventId)).toEqual(ids.slice(1));
      }
    });
  });

  describe('rate limit', () => {
    it('makes limit runs per window, skips the other events RATE_LIMITED, and admits again once the window passed', async () => {
      const name = fresh('signup');
      const schedule = await listen(client, name, { rateLimit: { limit: 5, period: '3s' } });
      const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => send(client, name, { i })));
      const admitted = answers.filter((a) => a.runs.length === 1);
      const limited = answers.filter((a) => a.runs.length === 0);
      expect(admitted).toHaveLength(5);
      expect(limited).toHaveLength(15);
      for (const a of admitted) expect(a.skipped).toEqual([]);
      for (const a of limited) expect(a.skipped).toEqual([{ scheduleId: schedule.id, reasonCode: 'RATE_LIMITED' }]);
      await allSucceeded(t, schedule.id, 5);

      // Still inside the window: refused.
      const lastAdmitted = Math.max(...admitted.map((a) => Date.parse(a.receivedAt)));
      if (Date.now() < lastAdmitted + 2_500) expect((await send(client, name, { i: 'early' })).skipped[0]?.reasonCode).toBe('RATE_LIMITED');
      await sleep(Math.max(0, lastAdmitted + 3_000 + 200 - Date.now()));
      const next = await send(client, name, { i: 'next' });
      expect(next.runs).toHaveLength(1);
      expect(next.skipped).toEqual([]);
      expect((await runInState(client, next.runs[0]!)).state).toBe('succeeded');
      expect(await runsOf(t, schedule.id)).toHaveLength(6);
    });
  });

  describe('batch', () => {
    it('gathers 25 events into runs of 10, 10 and 5 (the last after the timeout), each event in exactly one run', async () => {
      const name = fresh('row.inserted');
      const schedule = await listen(client, name, { batch: { maxSize: 10, timeout: '2s' }, payload: { table: 'rows' } });
      const sent: EventView[] = [];
      for (let i = 0; i < 25; i++) sent.push(await send(client, name, { i }, `${name}-${i}`));
      const lastSentAt = Date.now();
      const runs = await allSucceeded(t, schedule.id, 3);
      const sizes = runs.map((r) => r.payload.events.length);
      expect(sizes).toEqual([10, 10, 5]);
      for (const run of runs) expect(run.payload.table).toBe('rows');
      const all = runs.flatMap((r) => (r.payload.events as EventBody[]).map((e) => e.id));
      expect(all).toEqual(sent.map((e) => e.id));
      for (const [i, run] of runs.entries()) {
        const events = run.payload.events as EventBody[];
        expect(events.map((e) => e.data.i)).toEqual(events.map((_, j) => i * 10 + j));
        for (const e of events) expect(sent.find((s) => s.id === e.id)!.runs).toEqual([run.id]);
        expect((await gathered(client, run.id)).map((g) => g.eventId)).toEqual(events.slice(1).map((e) => e.id));
      }
      const told = (await explain(runs[2]!.id)).filter((l) => l.includes('event_gathered'));
      expect(told.map((l) => /gathered event (\S+) into its batch/.exec(l)?.[1])).toEqual(sent.slice(21).map((e) => e.id));
      // The last run waited for its timeout: 2 s after its first event.
      const lastFirst = Date.parse(sent[20]!.receivedAt);
      expect(runs[2]!.startedAtUs! / 1_000).toBeGreaterThanOrEqual(lastFirst + 2_000 - 5);
      expect(runs[2]!.startedAtUs! / 1_000).toBeGreaterThanOrEqual(lastSentAt - 2_000);
      // The full ones did not.
      for (const run of runs.slice(0, 2)) {
        const first = Date.parse(sent.find((s) => s.id === run.payload.events[0].id)!.receivedAt);
        expect(run.startedAtUs! / 1_000 - first, 'a full batch started before its timeout').toBeLessThan(2_000 + 1_500);
      }
    });
  });
});

describe('flow control across processes killed with -9', () => {
  const t = useTestEnvironment();
  const children: KairosChild[] = [];

  afterEach(async () => {
    const stopping = children.splice(0);
    for (const child of stopping) child.process.kill('SIGKILL');
    await Promise.all(stopping.map((c) => c.exited));
  });

  async function start(app: 'api' | 'scheduler' | 'worker' | 'kairos'): Promise<{ child: KairosChild; url: string }> {
    const child = spawnKairos(app, { ...t.env(), DATABASE_POOL_SIZE: '4' });
    children.push(child);
    return { child, url: await child.ready };
  }

  async function kill(child: KairosChild): Promise<void> {
    child.process.kill('SIGKILL');
    await child.exited;
  }

  it(
    'debounce: the leader killed inside a window still gives exactly one run, started within 1 s of its due instant',
    async () => {
      const [apiProcess, scheduler] = await Promise.all([start('api'), start('scheduler'), start('worker')]);
      const client = api(apiProcess.url);
      const name = 'invoice.edited';
      const schedule = await listen(client, name, { debounce: { key: '{{event.data.invoice}}', period: '3s', maxWait: '1m' } });
      const first = await send(client, name, { invoice: 'inv-1', edit: 1 });
      await kill(scheduler.child);
      await sleep(1_000);
      const last = await send(client, name, { invoice: 'inv-1', edit: 2 });
      expect(last.runs).toEqual(first.runs);
      const due = Date.parse(last.receivedAt) + 3_000;

      const run = await runInState(client, first.runs[0]!, ['succeeded'], 30_000);
      const lateMs = Date.parse(run.startedAt) - due;
      expect(lateMs, `started ${lateMs} ms after its due instant`).toBeGreaterThanOrEqual(-5);
      expect(lateMs).toBeLessThan(1_000);
      expect(run.payload.event.data).toEqual({ invoice: 'inv-1', edit: 2 });
      await sleep(1_000);
      expect(await runsOf(t, schedule.id)).toHaveLength(1);
    },
    SPAWNING_TIMEOUT_MS * 2,
  );

  it(
    'throttle: 20 events at once, limit 5 per 2 s: all run, never more than 5 starts in any 2 s, across two workers and one killed with -9',
    async () => {
      const [apiProcess, , workerA] = await Promise.all([start('api'), start('scheduler'), start('worker'), start('worker')]);
      const client = api(apiProcess.url);
      const name = 'email.requested';
      const schedule = await listen(client, name, {
        throttle: { limit: 5, period: '2s' },
        target: { type: 'handler', name: 'sleep' },
        payload: { ms: 300 },
      });
      const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => send(client, name, { i })));
      const runIds = answers.map((a) => {
        expect(a.runs).toHaveLength(1);
        return a.runs[0]!;
      });
      expect(new Set(runIds).size).toBe(20);

      // Those beyond the first window wait, saying why.
      const views = await Promise.all(runIds.map(async (id) => (await client.get(`/v1/runs/${id}`)).body));
      const waiting = views.filter((v) => v.state === 'queued');
      expect(waiting.length, JSON.stringify(views.map((v) => [v.state, v.deferReason]))).toBeGreaterThanOrEqual(10);
      for (const v of waiting) expect(v.deferReason, `run ${v.id}`).toBe('THROTTLED');

      // A worker dies in the second window.
      await sleep(2_300);
      await kill(workerA.child);

      const runs = await allSucceeded(t, schedule.id, 20, 60_000);
      const starts = runs.map((r) => r.startedAtUs!).sort((a, b) => a - b);
      for (const [i, s] of starts.entries()) {
        const inWindow = starts.filter((x) => x >= s && x < s + 2_000_000).length;
        expect(inWindow, `starts in the 2 s from start ${i}: ${starts.map((x) => ((x - starts[0]!) / 1_000).toFixed(0)).join(', ')} ms`).toBeLessThanOrEqual(5);
      }
      // And not held back much more than the throttle asks: four windows, with room for a loaded machine.
      expect((starts.at(-1)! - starts[0]!) / 1_000).toBeLessThan(6_000 + 8_000);
    },
    SPAWNING_TIMEOUT_MS * 2,
  );

  it(
    'batch: the API and the leader killed with -9 between sends: every event in exactly one run, none lost or doubled',
    async () => {
      let apiProcess = await start('api');
      let scheduler = await start('scheduler');
      await start('worker');
      let client = api(apiProcess.url);
      const name = 'audit.entry';
      const schedule = await listen(client, name, { batch: { maxSize: 10, timeout: '4s' } });
      const ids = Array.from({ length: 25 }, (_, i) => `audit-${i}`);
      for (const id of ids.slice(0, 13)) await send(client, name, { id }, id);

      await Promise.all([kill(apiProcess.child), kill(scheduler.child)]);
      [apiProcess, scheduler] = await Promise.all([start('api'), start('scheduler')]);
      client = api(apiProcess.url);
      for (const id of ids.slice(13)) await send(client, name, { id }, id);

      const runs = await waitFor(
        async () => {
          const all = await runsOf(t, schedule.id);
          const events = all.reduce((n, r) => n + r.payload.events.length, 0);
          return events === 25 && all.every((r) => r.state === 'succeeded') ? all : undefined;
        },
        'every event gathered into a run that succeeded',
        60_000,
        200,
      );
      const gatheredIds = runs.flatMap((r) => (r.payload.events as EventBody[]).map((e) => e.id));
      expect([...gatheredIds].sort()).toEqual([...ids].sort());
      expect(new Set(gatheredIds).size).toBe(25);
      for (const run of runs) expect(run.payload.events.length).toBeLessThanOrEqual(10);
      // In the order they came, run after run.
      expect(gatheredIds).toEqual(ids);
      // Each event names its run, and the ledger has no run of the schedule beyond these.
      const { rows } = await t.db.query(`SELECT id, run_ids::text[] AS runs FROM events WHERE name = $1`, [name]);
      expect(rows).toHaveLength(25);
      for (const row of rows) {
        const holder = runs.find((r) => r.payload.events.some((e: EventBody) => e.id === row.id))!;
        expect(row.runs, row.id).toEqual([holder.id]);
      }
      await sleep(1_000);
      expect(await runsOf(t, schedule.id)).toHaveLength(runs.length);
    },
    SPAWNING_TIMEOUT_MS * 3,
  );
});
