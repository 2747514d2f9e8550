/**
 * Events when API processes die or race, with the API from the build in processes of its own on
 * one ledger. An API killed with -9 while it stores a batch of 1,000 events (each matched by three
 * schedules) leaves each event with all three of its runs or not at all, and the same batch sent
 * again completes it: each event once with its three runs, those stored before answered deduped.
 * Two APIs sent the same ids at once store each id once: one answer per id is the new event (202),
 * the other the same event deduped (200) with the same runs.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { api, sleep, SPAWNING_TIMEOUT_MS, spawnKairos, useTestEnvironment, waitFor, type KairosChild, type TestEnvironment } from '../support/kairos.js';

const echo = { type: 'handler', name: 'echo' };
const BATCH = 1_000;

interface EventView {
  id: string;
  name: string;
  data: unknown;
  receivedAt: string;
  deduped: boolean;
  runs: string[];
}

/** What the ledger holds of the events whose ids start with `prefix`: each event's listed runs and the runs that name it. */
async function ledgerOf(t: TestEnvironment, prefix: string): Promise<{ events: Map<string, { listed: string[]; runs: string[]; schedules: string[] }>; orphanRuns: number }> {
  const { rows } = await t.db.query<{ id: string; listed: string[]; runs: string[]; schedules: string[] }>(
    `SELECT e.id, e.run_ids::text[] AS listed,
            coalesce(array_agg(r.id::text ORDER BY r.id) FILTER (WHERE r.id IS NOT NULL), '{}') AS runs,
            coalesce(array_agg(r.schedule_id::text ORDER BY r.schedule_id) FILTER (WHERE r.id IS NOT NULL), '{}') AS schedules
     FROM events e LEFT JOIN runs r ON r.event_id = e.id
     WHERE e.id LIKE $1 GROUP BY e.namespace_id, e.id`,
    [`${prefix}%`],
  );
  const orphans = await t.db.query(`SELECT count(*)::int AS n FROM runs r WHERE r.event_id LIKE $1 AND NOT EXISTS (SELECT 1 FROM events e WHERE e.id = r.event_id)`, [`${prefix}%`]);
  return { events: new Map(rows.map((r) => [r.id, { listed: [...r.listed].sort(), runs: r.runs, schedules: r.schedules }])), orphanRuns: orphans.rows[0].n };
}

describe('events when API processes die or race', () => {
  const t = useTestEnvironment();
  const children: KairosChild[] = [];

  afterEach(async () => {
    const stopping = children.splice(0);
    for (const child of stopping) child.process.kill('SIGKILL');
    await Promise.all(stopping.map((c) => c.exited));
  });

  async function startApi(): Promise<{ child: KairosChild; client: ReturnType<typeof api>; url: string }> {
    const child = spawnKairos('api', { ...t.env(), DATABASE_POOL_SIZE: '5' });
    children.push(child);
    const url = await child.ready;
    return { child, client: api(url), url };
  }

  /** Creates `count` schedules listening to `event`, each making a run of every such event. */
  async function listeners(client: ReturnType<typeof api>, event: string, count: number): Promise<string[]> {
    const ids: string[] = [];
    for (let i = 0; i < count; i++) {
      const created = await client.post('/v1/schedules', { name: `${event}-listener-${i}`, on: { event }, target: echo, overlap: 'allow', payload: { listener: i } });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      ids.push(created.body.id);
    }
    return ids.sort();
  }

  /** The Kairos connections to the test database in a transaction that has written (an xid) on the event path. */
  const writingTransactions = async (): Promise<number> =>
    (
      await t.db.query(
        `SELECT count(*)::int AS n FROM pg_stat_activity
         WHERE datname = current_database() AND application_name LIKE 'kairos%' AND backend_xid IS NOT NULL AND query ~* '\\m(events|runs|schedules)\\M'`,
      )
    ).rows[0].n;

  /** Once no Kairos process is connected to the test database: Postgres has ended a killed one's sessions, rolling back what it had not committed. */
  const sessionsEnded = (what: string): Promise<true> =>
    waitFor(
      async () => ((await t.db.query(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND application_name LIKE 'kairos%'`)).rows[0].n === 0 ? true : undefined),
      what,
      30_000,
    );

  it(
    'leaves each event of a batch whose API was killed with -9 either with all its runs or absent, and the same batch sent again completes it',
    async () => {
      let current = await startApi();
      const schedules = await listeners(current.client, 'order.paid', 3);

      // When each round's API is killed: as its batch's transaction starts writing, well inside it, and once it has committed (before or after it answered).
      const kills: { when: string; wait: () => Promise<unknown> }[] = [
        { when: 'as the transaction writes', wait: () => waitFor(async () => ((await writingTransactions()) > 0 ? true : undefined), 'the batch transaction to write', 30_000, 2) },
        {
          when: '300 ms into the transaction',
          wait: async () => {
            await waitFor(async () => ((await writingTransactions()) > 0 ? true : undefined), 'the batch transaction to write', 30_000, 2);
            await sleep(300);
          },
        },
        {
          when: 'once the transaction committed',
          wait: () => waitFor(async () => ((await t.db.query(`SELECT count(*)::int AS n FROM events WHERE id LIKE 'paid-2-%'`)).rows[0].n === BATCH ? true : undefined), 'the batch to commit', 60_000, 2),
        },
      ];
      const storedBeforeResend: number[] = [];
      for (const [round, kill] of kills.entries()) {
        const prefix = `paid-${round}-`;
        const items = Array.from({ length: BATCH }, (_, i) => ({ name: 'order.paid', id: `${prefix}${i}`, data: { round, i } }));
        const doomed = current;
        const answer = fetch(`${doomed.url}/v1/events/batch`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ items }) }).then(
          (response) => response.status,
          () => 'no answer' as const,
        );
        await kill.wait();
        doomed.child.process.kill('SIGKILL');
        await doomed.child.exited;
        const answered = await answer;
        await sessionsEnded("the killed API's sessions to end");

        const context = `round ${round}, killed ${kill.when} (answer: ${answered})`;
        const before = await ledgerOf(t, prefix);
        expect(before.orphanRuns, `${context}: runs whose event is absent`).toBe(0);
        for (const [id, event] of before.events) {
          expect(event.runs, `${context}: the runs of ${id}`).toHaveLength(3);
          expect(event.listed, `${context}: the runs ${id} lists`).toEqual(event.runs);
          expect(event.schedules).toEqual(schedules);
        }
        // The batch is one transaction: all of it, or none.
        expect([0, BATCH], context).toContain(before.events.size);
        if (answered === 200 || round === 2) expect(before.events.size, context).toBe(BATCH);
        storedBeforeResend.push(before.events.size);

        // Sent again, to another API process: the stored events answer deduped with the runs they had, the rest are stored now.
        current = await startApi();
        const resent = await current.client.post('/v1/events/batch', { items });
        expect(resent.status).toBe(200);
        const views = resent.body.items as EventView[];
        expect(views).toHaveLength(BATCH);
        for (const [i, view] of views.entries()) {
          const had = before.events.get(`${prefix}${i}`);
          expect(view).toMatchObject({ id: `${prefix}${i}`, name: 'order.paid', data: { round, i }, deduped: had !== undefined });
          expect(view.runs).toHaveLength(3);
          if (had) expect([...view.runs].sort()).toEqual(had.runs);
        }
        const after = await ledgerOf(t, prefix);
        expect(after.orphanRuns).toBe(0);
        expect(after.events.size).toBe(BATCH);
        for (const [i, view] of views.entries()) {
          const event = after.events.get(`${prefix}${i}`)!;
          expect(event.runs).toEqual([...view.runs].sort());
          expect(event.listed).toEqual(event.runs);
          expect(event.schedules).toEqual(schedules);
        }
      }
      // The kill as the transaction wrote landed inside it: nothing of its batch was stored before the resend.
      expect(storedBeforeResend[0], 'events stored before the resend, by round: ' + storedBeforeResend.join(', ')).toBe(0);
      const total = await t.db.query(`SELECT count(*)::int AS events, (SELECT count(*)::int FROM runs WHERE event_id IS NOT NULL) AS runs FROM events`);
      expect(total.rows[0]).toEqual({ events: kills.length * BATCH, runs: kills.length * BATCH * 3 });
      const fires = await t.db.query(`SELECT fire_count AS n FROM schedules WHERE id = ANY($1::uuid[])`, [schedules]);
      expect(fires.rows.map((r) => r.n)).toEqual(schedules.map(() => kills.length * BATCH));
    },
    SPAWNING_TIMEOUT_MS * 3,
  );

  it(
    'stores an id sent to two API processes at once once: one answer is the new event, the other the same event deduped',
    async () => {
      const [a, b] = await Promise.all([startApi(), startApi()]);
      const schedules = await listeners(a.client, 'invoice.sent', 2);
      const ignored = await a.client.post('/v1/schedules', { name: 'invoice-other', on: { event: 'invoice.sent', match: { 'data.kind': 'other' } }, target: echo });
      expect(ignored.status).toBe(201);

      const IDS = 150;
      /**
       * Ids in flight at once, each sent to both processes. All events of one name queue on their
       * schedules' row locks, one transaction at a time across the processes, while each request
       * waits for a connection of its pool (10, for at most 10 s): a few hundred at once on this
       * loaded machine outwaited that and were answered 500.
       */
      const IN_FLIGHT = 25;
      const send = async (i: number) => {
        const body = { name: 'invoice.sent', id: `invoice-${i}`, data: { i, kind: 'paid' } };
        // The order alternates, so neither process is always first to be asked.
        const [x, y] = i % 2 === 0 ? [a, b] : [b, a];
        return Promise.all([x.client.post('/v1/events', body), y.client.post('/v1/events', body)]);
      };
      const answers: Awaited<ReturnType<typeof send>>[] = [];
      let next = 0;
      await Promise.all(
        Array.from({ length: IN_FLIGHT }, async () => {
          for (let i = next++; i < IDS; i = next++) answers[i] = await send(i);
        }),
      );
      const failed = answers.findIndex((pair) => pair.some((p) => p.status >= 500));
      const serverErrors = (child: KairosChild) =>
        child
          .output()
          .split('\n')
          .filter((line) => line.includes('"level":"error"'))
          .slice(0, 3)
          .join('\n');
      expect(failed, `invoice-${failed}: ${JSON.stringify(answers[failed])}\n${serverErrors(a.child)}\n${serverErrors(b.child)}`).toBe(-1);
      for (const [i, pair] of answers.entries()) {
        const fresh = pair.filter((p) => p.status === 202);
        const deduped = pair.filter((p) => p.status === 200);
        expect(fresh, `invoice-${i}: ${JSON.stringify(pair)}`).toHaveLength(1);
        expect(deduped, `invoice-${i}: ${JSON.stringify(pair)}`).toHaveLength(1);
        expect(fresh[0]!.body).toMatchObject({ id: `invoice-${i}`, deduped: false, data: { i, kind: 'paid' } });
        expect(fresh[0]!.body.runs).toHaveLength(2);
        expect(deduped[0]!.body).toEqual({ ...fresh[0]!.body, deduped: true });
      }

      const ledger = await ledgerOf(t, 'invoice-');
      expect(ledger.events.size).toBe(IDS);
      expect(ledger.orphanRuns).toBe(0);
      for (const [i, pair] of answers.entries()) {
        const event = ledger.events.get(`invoice-${i}`)!;
        expect(event.schedules).toEqual(schedules);
        expect(event.runs).toEqual([...pair.find((p) => p.status === 202)!.body.runs].sort());
      }
      expect((await t.db.query(`SELECT count(*)::int AS n FROM runs WHERE schedule_id = $1`, [ignored.body.id])).rows[0].n).toBe(0);
      for (const child of [a.child, b.child]) expect(child.process.exitCode, child.output().slice(-2_000)).toBeNull();
    },
    SPAWNING_TIMEOUT_MS * 2,
  );
});
