// Declares a schedule on the worker's queue, runs it once now, and prints what happened.
import { KairosApiError, KairosClient } from '@kairos/sdk';

const kairos = new KairosClient({ baseUrl: process.env.KAIROS_URL ?? 'http://localhost:3000', apiKey: process.env.KAIROS_API_KEY });

try {
  const schedule = await kairos.schedules.put('hello-every-minute', {
    cron: '* * * * *',
    target: { type: 'handler', name: 'say-hello', queue: 'media' },
    payload: { name: 'Ada' },
  });
  const run = await kairos.schedules.trigger(schedule.id);
  let current = await kairos.runs.get(run.id);
  while (current.state === 'queued' || current.state === 'running') {
    await new Promise((resolve) => setTimeout(resolve, 250));
    current = await kairos.runs.get(run.id);
  }
  console.log(current.state, current.result);
  for await (const worker of kairos.workers.list()) console.log(worker.id, worker.queue, worker.handlers.join(','));
} catch (error) {
  // e.g. UNKNOWN_HANDLER on target.name until worker.mjs has started once
  if (error instanceof KairosApiError) console.error(`${error.status} ${error.code} ${error.field ?? ''}: ${error.message}`);
  else throw error;
  process.exitCode = 1;
}
