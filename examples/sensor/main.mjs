// A sensor: every second, a handler looks for new files after its cursor and asks for one run per file, once per file.
import { KairosClient, KairosWorker } from '@kairos/sdk';

const kairos = new KairosClient({ baseUrl: process.env.KAIROS_URL ?? 'http://127.0.0.1:3000', apiKey: process.env.KAIROS_API_KEY });

const bucket = ['2026-12-01.csv', '2026-12-02.csv', '2026-12-03.csv']; // stands for a bucket's listing

const worker = new KairosWorker({
  queue: 'invoices',
  handlers: {
    // The evaluation: the cursor is what the last committed one answered (null the first time).
    'list-new-files': async ({ cursor, payload }) => {
      const files = bucket.filter((file) => cursor === null || file > cursor);
      return { runs: files.map((file) => ({ runKey: file, payload: { bucket: payload.bucket, file } })), cursor: files.at(-1) ?? cursor };
    },
    // A run the sensor asked for: a run key asked for before makes no new run.
    'import-invoice': async ({ payload }) => ({ imported: `${payload.bucket}/${payload.file}` }),
  },
});

await worker.start();
const sensor = await kairos.sensors.create({
  name: 'new-invoices',
  every: '1s',
  target: { type: 'handler', name: 'list-new-files', queue: 'invoices' },
  payload: { bucket: 'invoices' },
  run: { target: { type: 'handler', name: 'import-invoice', queue: 'invoices' }, retry: { maxAttempts: 5 } },
});
try {
  const imported = new Map();
  const deadline = Date.now() + 30_000;
  while (imported.size < bucket.length) {
    if (Date.now() > deadline) throw new Error(`${imported.size} of ${bucket.length} files imported within 30 s`);
    await new Promise((resolve) => setTimeout(resolve, 500));
    for await (const tick of kairos.sensors.ticks(sensor.id)) {
      for (const runId of tick.runIds) {
        const run = await kairos.runs.get(runId);
        if (run.state === 'succeeded' && !imported.has(run.runKey)) imported.set(run.runKey, run.result);
      }
    }
  }
  for (const [file, result] of imported) console.log(`${file}: ${JSON.stringify(result)}`);
  const { cursor, lastTick } = await kairos.sensors.get(sensor.id);
  console.log(`the sensor imported ${imported.size} files, one run each; its cursor is ${JSON.stringify(cursor)}, its last tick ${lastTick.state}`);
} finally {
  await kairos.sensors.delete(sensor.id); // the runs it made stay
  await worker.stop();
}
