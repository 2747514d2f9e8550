// The typed client: declare, list, trigger and pause a schedule, list its runs, and retry a dead run.
import { KairosApiError, KairosClient } from '@kairos/sdk';

const kairos = new KairosClient({ baseUrl: process.env.KAIROS_URL ?? 'http://127.0.0.1:3000', apiKey: process.env.KAIROS_API_KEY });

/** The run once it has ended: its stream answers the run now, then at each change, and ends with it. */
async function ended(runId) {
  let run;
  for await (run of kairos.runs.stream(runId, { signal: AbortSignal.timeout(30_000) }));
  return run;
}

// echo and fail are built-in handlers: the server's own worker runs them on queue "default".
const schedule = await kairos.schedules.put('nightly-report', {
  cron: '30 2 * * *',
  timezone: 'Europe/Berlin',
  target: { type: 'handler', name: 'echo' },
  payload: { report: 'nightly' },
});
for await (const s of kairos.schedules.list({ name: 'nightly-report' })) console.log(`schedule ${s.name}: "${s.cron}" in ${s.timezone}, next at ${s.nextFireAt}`);

const triggered = await kairos.schedules.trigger(schedule.id); // one run now, beside the cron's
console.log(`triggered run ${triggered.id}: ${(await ended(triggered.id)).state}`);
const paused = await kairos.schedules.pause(schedule.id);
console.log(`schedule ${paused.name} is ${paused.status}: its slots pass without runs until resume()`);
for await (const run of kairos.runs.list({ scheduleId: schedule.id, limit: 10 })) {
  console.log(`  run ${run.id}: ${run.origin} ${run.state} ${JSON.stringify(run.result)}`);
}

// A run that fails for good ends dead at once; a retry is a fresh run of its target and payload.
const failing = await kairos.runs.create({ target: { type: 'handler', name: 'fail' }, payload: { message: 'the printer is on fire', retryable: false } });
const dead = await ended(failing.id);
console.log(`run ${dead.id} ${dead.state} (${dead.reasonCode}): ${dead.error.message}`);
const retry = await kairos.runs.retry(dead.id);
console.log(`retried run ${retry.sourceRunId} as run ${retry.id} (origin ${retry.origin}): ${(await ended(retry.id)).state}, as fail always does`);

// A refusal throws KairosApiError with the API's status, code and field.
try {
  await kairos.schedules.create({ name: 'typo', cron: 'every day', target: { type: 'handler', name: 'echo' } });
} catch (error) {
  if (!(error instanceof KairosApiError)) throw error;
  console.log(`refused: ${error.status} ${error.code} on ${error.field}: ${error.message}`);
}
