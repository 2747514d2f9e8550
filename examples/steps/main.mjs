// A multi-step run: extract, then transform and audit side by side, then load once both are done.
import { KairosClient, KairosWorker } from '@kairos/sdk';

const kairos = new KairosClient({ baseUrl: process.env.KAIROS_URL ?? 'http://127.0.0.1:3000', apiKey: process.env.KAIROS_API_KEY });

// Each step is a run of its own; its handler gets the run's payload and its upstream steps' results as `inputs`.
const worker = new KairosWorker({
  queue: 'etl',
  handlers: {
    extract: async ({ payload }) => ({ rows: [3, 1, 2].map((n) => ({ day: payload.day, amount: n * 100 })) }),
    transform: async ({ inputs }) => ({ total: inputs.extract.rows.reduce((sum, row) => sum + row.amount, 0) }),
    audit: async ({ inputs }) => ({ checked: inputs.extract.rows.length }),
    load: async ({ inputs }) => ({ loaded: inputs.transform.total, audited: inputs.audit.checked }),
  },
});

const etl = (name) => ({ type: 'handler', name, queue: 'etl' });

await worker.start();
try {
  const run = await kairos.runs.create({
    payload: { day: '2026-12-01' },
    steps: [
      { name: 'extract', target: etl('extract') },
      { name: 'transform', dependsOn: ['extract'], target: etl('transform'), retry: { maxAttempts: 3 } },
      { name: 'audit', dependsOn: ['extract'], target: etl('audit') },
      { name: 'load', dependsOn: ['transform', 'audit'], target: etl('load') },
    ],
  });
  console.log(`run ${run.id} with steps ${run.steps.map((s) => s.name).join(', ')}`);

  // The run's stream answers the run now and at each change, and ends once the run has ended.
  let ended = run;
  for await (const view of kairos.runs.stream(run.id, { signal: AbortSignal.timeout(30_000) })) ended = view;
  for (const s of ended.steps) console.log(`  ${s.name.padEnd(9)} ${s.state.padEnd(9)} after [${s.dependsOn.join(', ')}]: ${JSON.stringify(s.result)}`);
  if (ended.state !== 'succeeded') throw new Error(`the run ended ${ended.state}`);
  console.log(`run ${ended.state}: ${JSON.stringify(ended.result.load)}`);
} finally {
  await worker.stop();
}
