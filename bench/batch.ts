/** Bulk creation through the API: one-shot timers in batches and one at a time, and an apply of cron schedules. */
import { fmt, printTable, sandbox, sleep, startBuilt } from './sandbox.js';

/**
 * Bulk creation through the API: BATCHES × 1,000 one-shot timers with POST /v1/schedules/batch,
 * against 1,000 timers with POST /v1/schedules one at a time (under the default rate limit, a
 * refused request waits its Retry-After), against the API from the build in a process of its own.
 */
export async function batchScenario(): Promise<void> {
  const BATCHES = 10;
  const timer = (i: number) => ({ in: `${10 + (i % 50)}m`, target: { type: 'handler', name: 'echo' }, payload: { i }, idempotencyKey: `timer-${i}` });
  const post = async (base: string, path: string, body: unknown): Promise<Response> =>
    fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const box = await sandbox('batch');
  // The API from the build, in a process of its own, as users run it.
  const api = startBuilt('api', 'api', box, { KAIROS_AUTH: 'optional' });
  const app = { url: await api.ready };
  try {
    const started = performance.now();
    for (let b = 0; b < BATCHES; b++) {
      const response = await post(app.url, '/v1/schedules/batch', { items: Array.from({ length: 1_000 }, (_, i) => timer(b * 1_000 + i)) });
      const { items } = (await response.json()) as { items: { id?: string }[] };
      if (response.status !== 200 || items.some((item) => item.id === undefined)) throw new Error(`bench: batch ${b} answered ${response.status}`);
    }
    const batchMs = performance.now() - started;
    const singleStarted = performance.now();
    let waited = 0;
    for (let i = 0; i < 1_000; ) {
      const response = await post(app.url, '/v1/schedules', timer(BATCHES * 1_000 + i));
      if (response.status === 429) {
        const ms = Number(response.headers.get('retry-after') ?? '1') * 1000;
        waited += ms;
        await sleep(ms);
        continue;
      }
      if (response.status !== 201) throw new Error(`bench: a single create answered ${response.status}`);
      await response.arrayBuffer();
      i++;
    }
    const singleMs = performance.now() - singleStarted;
    // Schedules as code: 1,000 cron schedules of one source, applied, then applied again unchanged.
    const declaration = {
      source: 'bench',
      schedules: Array.from({ length: 1_000 }, (_, i) => ({ name: `declared-${i}`, cron: `${i % 60} ${i % 24} * * *`, timezone: 'Europe/Berlin', target: { type: 'handler', name: 'echo' }, payload: { i } })),
    };
    const applies: number[] = [];
    for (let round = 0; round < 2; round++) {
      const started = performance.now();
      const response = await post(app.url, '/v1/apply', declaration);
      if (response.status !== 200) throw new Error(`bench: apply answered ${response.status}: ${await response.text()}`);
      await response.arrayBuffer();
      applies.push(performance.now() - started);
    }
    printTable([
      ['bulk creation (one-shot timers through the API)', 'timers', 'seconds', 'timers/s'],
      [`POST /v1/schedules/batch, ${BATCHES} calls of 1,000`, String(BATCHES * 1_000), fmt(batchMs / 1000, 2), fmt((BATCHES * 1_000 * 1000) / batchMs)],
      [`POST /v1/schedules, one at a time (${fmt(waited / 1000)} s of it waiting out the rate limit)`, '1000', fmt(singleMs / 1000, 2), fmt((1_000 * 1000) / singleMs)],
      ['POST /v1/apply, 1,000 cron schedules of one source (all created)', '1000', fmt(applies[0]! / 1000, 2), fmt((1_000 * 1000) / applies[0]!)],
      ['POST /v1/apply again, unchanged (a no-op)', '1000', fmt(applies[1]! / 1000, 2), fmt((1_000 * 1000) / applies[1]!)],
    ]);
    process.stdout.write(`target: ${BATCHES * 1_000} timers in ten batch calls in under 2 s; an apply of 1,000 schedules within 5 s\n`);
  } finally {
    api.process.kill('SIGTERM');
    await api.exited;
    await box.drop();
  }
}
