// A worker with one handler, and a schedule that runs it every two seconds: prints three results.
import { KairosClient, KairosWorker } from '@kairos/sdk';

const kairos = new KairosClient({ baseUrl: process.env.KAIROS_URL ?? 'http://127.0.0.1:3000', apiKey: process.env.KAIROS_API_KEY });

// The worker reads DATABASE_URL, REDIS_URL and KAIROS_QUEUE_PREFIX as the server does (same defaults).
const worker = new KairosWorker({
  queue: 'greetings',
  handlers: {
    'say-hello': async ({ payload, scheduledFor, attempt }) => ({ hello: payload.name, slot: scheduledFor.toISOString(), attempt }),
  },
});

await worker.start(); // registers "say-hello" on queue "greetings": schedules may name it from now on
try {
  const schedule = await kairos.schedules.put('hello-every-2s', {
    every: '2s',
    target: { type: 'handler', name: 'say-hello', queue: 'greetings' },
    payload: { name: 'Ada' },
  });
  console.log(`schedule ${schedule.name} fires every ${schedule.every}, next at ${schedule.nextFireAt}`);

  const printed = new Set();
  const deadline = Date.now() + 30_000;
  while (printed.size < 3) {
    if (Date.now() > deadline) throw new Error('no three runs succeeded within 30 s');
    await new Promise((resolve) => setTimeout(resolve, 500));
    for await (const run of kairos.runs.list({ scheduleId: schedule.id, state: 'succeeded' })) {
      if (printed.has(run.id) || printed.size === 3) continue;
      printed.add(run.id);
      console.log(`run ${run.id} succeeded: ${JSON.stringify(run.result)}`);
    }
  }
  await kairos.schedules.delete(schedule.id); // a demo: nothing should fire once its worker is gone
  console.log('3 scheduled runs succeeded');
} finally {
  await worker.stop(); // lets running handlers finish within the grace, then closes its connections
}
