/**
 * Flow control on the event path: what a throttle and a rate limit add to an event's cost, and how
 * soon a batch's runs are made. The API runs from the build in a process of its own, a scheduler and
 * built-in worker in another; Redis is the transport.
 *   (a) EVENTS events in one POST /v1/events/batch, each matching one schedule of EVENTS (a name
 *       per schedule), the schedules plain or each with a throttle and a rate limit keyed on the
 *       event (limits high enough that every event runs at once: what is measured is the deciding,
 *       the marks written and the claim's throttle check, not waiting): the time to accept the
 *       request, and from sending it until the last of its runs started; and one event at a time
 *       (POST /v1/events), its request's latency, median of SAMPLES a round. Alternating rounds;
 *       the ratios are controlled over plain.
 *   (b) BATCH_EVENTS events for one schedule with batch { maxSize: BATCH_SIZE, timeout: 1s }, sent as
 *       BATCH_EVENTS / 50 concurrent POST /v1/events/batch requests of 50: the runs made (each of
 *       BATCH_SIZE events, every event in exactly one) and the time from the first send until the
 *       last of them started.
 * Every side waits for the runs it made to succeed before the next one starts.
 */
import { existsSync } from 'node:fs';
import { fmt, median, printTable, ROOT, sandbox, sleep, startBuilt } from './sandbox.js';
import { createSchedules, lastStart, post } from './events.js';

const EVENTS = Number(process.env.KAIROS_BENCH_EVENTS ?? 1_000);
const ROUNDS = Number(process.env.KAIROS_BENCH_ROUNDS ?? 3);
const SAMPLES = Number(process.env.KAIROS_BENCH_EVENT_SAMPLES ?? 9);
const BATCH_EVENTS = Number(process.env.KAIROS_BENCH_BATCH_EVENTS ?? 1_000);
const BATCH_SIZE = Number(process.env.KAIROS_BENCH_BATCH_SIZE ?? 100);
const BATCH_TIMEOUT_MS = 1_000;
const CHUNK = 50;
const noop = { type: 'handler', name: 'noop' };

export async function flowScenario(): Promise<void> {
  if (!existsSync(`${ROOT}dist/apps/api/src/main.js`)) throw new Error('bench: the flow scenario starts the API from the build; run npm run build first');
  const box = await sandbox('flow');
  const api = startBuilt('api', 'api', box, { KAIROS_AUTH: 'optional', KAIROS_RATE_LIMIT: '0' });
  const roles = startBuilt('scheduler and worker', 'kairos', box, { KAIROS_ROLES: 'scheduler,worker' });
  try {
    const base = await api.ready;
    await roles.ready;
    // Limits no round reaches: every event makes its run and starts at once, the controls decided all the same.
    const controls = {
      throttle: { key: 'k-{{event.data.n}}', limit: 100_000, period: '1m' },
      rateLimit: { key: 'k-{{event.data.n}}', limit: 100_000, period: '1m' },
    };
    await createSchedules(base, [
      ...Array.from({ length: EVENTS }, (_, i) => ({ name: `plain-${i}`, on: { event: `bench.plain.${i}` }, target: noop })),
      ...Array.from({ length: EVENTS }, (_, i) => ({ name: `controlled-${i}`, on: { event: `bench.controlled.${i}` }, target: noop, ...controls })),
      { name: 'batched', on: { event: 'bench.batched' }, target: noop, batch: { maxSize: BATCH_SIZE, timeout: `${BATCH_TIMEOUT_MS}ms` } },
    ]);

    // (a) The same events, plain and controlled.
    const sides = ['plain', 'controlled'] as const;
    const accepted = { plain: [] as number[], controlled: [] as number[] };
    const allStarted = { plain: [] as number[], controlled: [] as number[] };
    const single = { plain: [] as number[], controlled: [] as number[] };
    // Round -1 warms both sides up (the API's first requests, the first claims) and is not counted.
    for (let round = -1; round < ROUNDS; round++) {
      const counted = round >= 0;
      for (const side of round % 2 === 0 ? sides : [...sides].reverse()) {
        const sentAt = Date.now();
        const { status, body, ms } = await post(base, '/v1/events/batch', { items: Array.from({ length: EVENTS }, (_, i) => ({ name: `bench.${side}.${i}`, data: { n: i, round } })) });
        const views = body.items ?? [];
        if (status !== 200 || views.length !== EVENTS || views.some((v) => v.runs?.length !== 1)) throw new Error(`bench: ${side} events answered ${status}: ${JSON.stringify(views.find((v) => v.runs?.length !== 1) ?? body)}`);
        const startedMs = (await lastStart(box, views.map((v) => v.runs![0]!))) - sentAt;
        if (counted) {
          accepted[side].push(ms);
          allStarted[side].push(startedMs);
        }
        await sleep(300);
      }
      const samples = { plain: [] as number[], controlled: [] as number[] };
      for (let sample = 0; sample < SAMPLES; sample++) {
        for (const side of (round + sample) % 2 === 0 ? sides : [...sides].reverse()) {
          const { status, body, ms } = await post(base, '/v1/events', { name: `bench.${side}.${sample % EVENTS}`, data: { n: sample % EVENTS, round, sample } });
          if (status !== 202 || body.runs?.length !== 1) throw new Error(`bench: one ${side} event answered ${status}: ${JSON.stringify(body)}`);
          samples[side].push(ms);
          await lastStart(box, body.runs);
        }
      }
      if (!counted) continue;
      single.plain.push(median(samples.plain));
      single.controlled.push(median(samples.controlled));
    }

    // (b) A batch of BATCH_EVENTS events gathered into BATCH_EVENTS / BATCH_SIZE runs.
    const ids = Array.from({ length: BATCH_EVENTS }, (_, i) => `batched-${i}`);
    const firstSentAt = Date.now();
    const answers = await Promise.all(
      Array.from({ length: Math.ceil(BATCH_EVENTS / CHUNK) }, (_, c) =>
        post(base, '/v1/events/batch', { items: ids.slice(c * CHUNK, (c + 1) * CHUNK).map((id, j) => ({ name: 'bench.batched', id, data: { n: c * CHUNK + j } })) }),
      ),
    );
    const runIds = [...new Set(answers.flatMap((a) => (a.body.items ?? []).flatMap((v) => v.runs ?? [])))];
    if (answers.some((a) => a.status !== 200)) throw new Error(`bench: a batch of events answered ${answers.find((a) => a.status !== 200)!.status}`);
    const lastStartedAt = await lastStart(box, runIds);
    const { rows } = await box.db.query<{ events: string[] }>(
      `SELECT array(SELECT e->>'id' FROM json_array_elements(payload->'events') e) AS events FROM runs WHERE id = ANY($1::uuid[])`,
      [runIds],
    );
    const gathered = rows.flatMap((r) => r.events);
    const exactlyOnce = gathered.length === BATCH_EVENTS && new Set(gathered).size === BATCH_EVENTS;

    const ratio = (side: 'plain' | 'controlled', of: Record<'plain' | 'controlled', number[]>): string => fmt(median(of.controlled.map((v, r) => v / of.plain[r]!)), 2);
    process.stdout.write(`\nflow control: ${EVENTS} events in one batch request, each matching one schedule, plain or with a throttle and a rate limit; median of ${ROUNDS} rounds, sides alternating\n`);
    printTable([
      ['', 'accepted (ms)', 'all started (ms)', `one event (ms), median of ${SAMPLES}`],
      ['plain', fmt(median(accepted.plain)), fmt(median(allStarted.plain)), fmt(median(single.plain), 1)],
      ['throttle + rateLimit', fmt(median(accepted.controlled)), fmt(median(allStarted.controlled)), fmt(median(single.controlled), 1)],
      ['controlled / plain', ratio('plain', accepted), ratio('plain', allStarted), ratio('plain', single)],
    ]);
    process.stdout.write(`rounds (accepted ms): plain ${accepted.plain.map((v) => fmt(v)).join(', ')}; controlled ${accepted.controlled.map((v) => fmt(v)).join(', ')}\n`);
    printTable([
      [`${BATCH_EVENTS} events, batch { maxSize: ${BATCH_SIZE}, timeout: ${BATCH_TIMEOUT_MS}ms }, ${Math.ceil(BATCH_EVENTS / CHUNK)} requests of ${CHUNK} at once`, 'value'],
      ['runs made', `${rows.length} (sizes ${rows.map((r) => r.events.length).sort((a, b) => b - a).join(', ')})`],
      ['every event in exactly one run', exactlyOnce ? 'yes' : 'NO'],
      ['first send → last run started (ms)', fmt(lastStartedAt - firstSentAt)],
    ]);
    process.stdout.write(
      `targets: throttle + rateLimit add <= 20% to the event path (controlled / plain <= 1.2); ${BATCH_EVENTS / BATCH_SIZE} runs of ${BATCH_SIZE}, made within timeout + 100 ms (<= ${BATCH_TIMEOUT_MS + 100} ms)\n`,
    );
  } finally {
    for (const child of [api, roles]) child.process.kill('SIGTERM');
    await Promise.all([api.exited, roles.exited]);
    await box.drop();
  }
}
