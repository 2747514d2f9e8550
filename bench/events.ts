/**
 * Events through the API: what an event's fan-out costs beside runs created directly. The API runs
 * from the build in a process of its own, as users run it, and a scheduler and built-in worker in
 * another; Redis is the transport.
 *   (a) EVENTS events in one POST /v1/events/batch, each matching one schedule of EVENTS, either
 *       through a name of its own (`on: { event: "bench.name.<i>" }`) or one name and a match
 *       (`on: { event: "bench.match", match: { "data.n": i } }`), beside EVENTS runs made by one
 *       POST /v1/runs/batch: the time to accept the request, and from sending it until the last of
 *       its runs started (the ledger's started_at), in alternating rounds; the ratio of start
 *       throughput is events over runs.
 *   (b) one event matched by FANOUT schedules: the request's latency, which is its transaction's
 *       (the event, its FANOUT runs and the schedules' fire counts), median of SAMPLES a round;
 *       beside an event nobody listens to (its insert alone).
 * Every side waits for the runs it made to succeed before the next one starts, so no side's runs
 * load another's measurement.
 */
import { existsSync } from 'node:fs';
import { fmt, median, printTable, ROOT, sandbox, sleep, startBuilt, until, type Sandbox } from './sandbox.js';

const EVENTS = Number(process.env.KAIROS_BENCH_EVENTS ?? 1_000);
const FANOUT = Number(process.env.KAIROS_BENCH_EVENT_FANOUT ?? 100);
const ROUNDS = Number(process.env.KAIROS_BENCH_ROUNDS ?? 3);
const SAMPLES = Number(process.env.KAIROS_BENCH_EVENT_SAMPLES ?? 9);
const noop = { type: 'handler', name: 'noop' };

/** What the routes the bench calls answer, as far as it reads them: a batch's items, or one event's runs. */
export interface Answer {
  items?: { id?: string; runs?: string[]; skipped?: unknown[]; error?: unknown }[];
  runs?: string[];
}

export async function post(base: string, path: string, body: unknown): Promise<{ status: number; body: Answer; ms: number }> {
  const started = performance.now();
  const response = await fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const answer = { status: response.status, body: (await response.json()) as Answer };
  return { ...answer, ms: performance.now() - started };
}

/** Creates schedules through POST /v1/schedules/batch, 1,000 a call. */
export async function createSchedules(base: string, schedules: Record<string, unknown>[]): Promise<void> {
  for (let i = 0; i < schedules.length; i += 1_000) {
    const { status, body } = await post(base, '/v1/schedules/batch', { items: schedules.slice(i, i + 1_000) });
    const refused = body.items?.find((item) => item.error);
    if (status !== 200 || refused) throw new Error(`bench: creating schedules answered ${status}: ${JSON.stringify(refused ?? body)}`);
  }
}

/**
 * Waits until every run in `ids` succeeded; answers the epoch ms the last of them started (the
 * ledger's clock, which this host shares with the local Postgres).
 */
export async function lastStart(box: Sandbox, ids: readonly string[]): Promise<number> {
  let last = 0;
  await until(
    async () => {
      const { rows } = await box.db.query<{ done: number; last: number | null }>(
        `SELECT count(*) FILTER (WHERE state = 'succeeded')::int AS done, extract(epoch FROM max(started_at)) * 1000 AS last FROM runs WHERE id = ANY($1::uuid[])`,
        [ids],
      );
      last = Number(rows[0]!.last);
      return rows[0]!.done === ids.length;
    },
    300_000,
    `${ids.length} runs to succeed`,
    100,
  );
  return last;
}

interface BatchSide {
  label: string;
  /** Sends the side's request of round `round`; answers the run ids it made. */
  send(round: number): Promise<{ runIds: string[]; ms: number }>;
}

export async function eventsScenario(): Promise<void> {
  if (!existsSync(`${ROOT}dist/apps/api/src/main.js`)) throw new Error('bench: the events scenario starts the API from the build; run npm run build first');
  const box = await sandbox('events');
  const api = startBuilt('api', 'api', box, { KAIROS_AUTH: 'optional', KAIROS_RATE_LIMIT: '0' });
  const roles = startBuilt('scheduler and worker', 'kairos', box, { KAIROS_ROLES: 'scheduler,worker' });
  try {
    const base = await api.ready;
    await roles.ready;
    await createSchedules(base, [
      ...Array.from({ length: EVENTS }, (_, i) => ({ name: `by-name-${i}`, on: { event: `bench.name.${i}` }, target: noop, overlap: 'allow' })),
      ...Array.from({ length: EVENTS }, (_, i) => ({ name: `by-match-${i}`, on: { event: 'bench.match', match: { 'data.n': i } }, target: noop, overlap: 'allow' })),
      ...Array.from({ length: FANOUT }, (_, i) => ({ name: `wide-${i}`, on: { event: 'bench.wide' }, target: noop, overlap: 'allow' })),
    ]);

    const eventSide = (label: string, item: (i: number, round: number) => Record<string, unknown>): BatchSide => ({
      label,
      send: async (round) => {
        const { status, body, ms } = await post(base, '/v1/events/batch', { items: Array.from({ length: EVENTS }, (_, i) => item(i, round)) });
        const views = body.items ?? [];
        if (status !== 200 || views.length !== EVENTS || views.some((v) => v.runs?.length !== 1)) throw new Error(`bench: ${label} answered ${status}: ${JSON.stringify(views.find((v) => v.runs?.length !== 1) ?? body)}`);
        return { runIds: views.map((v) => v.runs![0]!), ms };
      },
    });
    const sides: BatchSide[] = [
      {
        label: `POST /v1/runs/batch, ${EVENTS} runs`,
        send: async (round) => {
          const { status, body, ms } = await post(base, '/v1/runs/batch', { items: Array.from({ length: EVENTS }, (_, i) => ({ target: noop, payload: { n: i, round } })) });
          const views = body.items ?? [];
          if (status !== 200 || views.length !== EVENTS || views.some((v) => v.id === undefined)) throw new Error(`bench: the runs batch answered ${status}`);
          return { runIds: views.map((v) => v.id!), ms };
        },
      },
      eventSide(`POST /v1/events/batch, ${EVENTS} events, a name per schedule`, (i, round) => ({ name: `bench.name.${i}`, data: { n: i, round } })),
      eventSide(`POST /v1/events/batch, ${EVENTS} events of one name, match data.n`, (i, round) => ({ name: 'bench.match', data: { n: i, round } })),
    ];
    const accepted = new Map(sides.map((s) => [s, [] as number[]]));
    const started = new Map(sides.map((s) => [s, [] as number[]]));
    for (let round = 0; round < ROUNDS; round++) {
      for (const side of round % 2 === 0 ? sides : [...sides].reverse()) {
        const sentAt = Date.now();
        const { runIds, ms } = await side.send(round);
        accepted.get(side)!.push(ms);
        started.get(side)!.push((await lastStart(box, runIds)) - sentAt);
        await sleep(500);
      }
    }

    // (b) One event and its fan-out, a request at a time, beside an event nobody listens to.
    const wide: number[] = [];
    const lonely: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const samples = { wide: [] as number[], lonely: [] as number[] };
      const measure = {
        wide: async () => {
          const { status, body, ms } = await post(base, '/v1/events', { name: 'bench.wide', data: { round } });
          if (status !== 202 || body.runs?.length !== FANOUT) throw new Error(`bench: the wide event answered ${status} with ${body.runs?.length} runs`);
          samples.wide.push(ms);
          await lastStart(box, body.runs);
        },
        lonely: async () => {
          const { status, ms } = await post(base, '/v1/events', { name: 'bench.nobody', data: { round } });
          if (status !== 202) throw new Error(`bench: the event nobody listens to answered ${status}`);
          samples.lonely.push(ms);
        },
      };
      for (let sample = 0; sample < SAMPLES; sample++) {
        for (const side of (round + sample) % 2 === 0 ? [measure.wide, measure.lonely] : [measure.lonely, measure.wide]) await side();
      }
      wide.push(median(samples.wide));
      lonely.push(median(samples.lonely));
    }

    const [runs] = sides;
    const rate = (side: BatchSide, round: number): number => (EVENTS * 1000) / started.get(side)![round]!;
    process.stdout.write(`\nevents: ${EVENTS} events or runs in one batch request, each event matching one schedule; median of ${ROUNDS} rounds, sides alternating\n`);
    printTable([
      ['', 'accepted (ms)', 'all started (ms)', 'starts/s', 'starts/s / runs batch'],
      ...sides.map((side) => [
        side.label,
        fmt(median(accepted.get(side)!)),
        fmt(median(started.get(side)!)),
        fmt(median(started.get(side)!.map((_, r) => rate(side, r)))),
        fmt(median(started.get(side)!.map((_, r) => rate(side, r) / rate(runs!, r))), 2),
      ]),
    ]);
    printTable([
      ['one event through POST /v1/events', `request (ms), median of ${SAMPLES} a round, median of ${ROUNDS} rounds`, 'rounds'],
      [`matched by ${FANOUT} schedules (${FANOUT} runs in its transaction)`, fmt(median(wide), 1), wide.map((v) => fmt(v, 1)).join(', ')],
      ['nobody listens (its insert alone)', fmt(median(lonely), 1), lonely.map((v) => fmt(v, 1)).join(', ')],
    ]);
    process.stdout.write(`targets: ${EVENTS} events accepted in < 1 s; their runs start at >= 0.8x the runs batch's rate; an event matched by ${FANOUT} schedules in < 50 ms\n`);
  } finally {
    for (const child of [api, roles]) child.process.kill('SIGTERM');
    await Promise.all([api.exited, roles.exited]);
    await box.drop();
  }
}
