// A durable function: a step that runs once, a sleep, and a wait for a person's answer, sent here with the client.
import { KairosClient, KairosWorker } from '@kairos/sdk';

const kairos = new KairosClient({ baseUrl: process.env.KAIROS_URL ?? 'http://127.0.0.1:3000', apiKey: process.env.KAIROS_API_KEY });

const worker = new KairosWorker({
  queue: 'onboarding',
  handlers: {
    // Runs from the top on every attempt and resume: side effects go in steps, whose results are stored once.
    'onboard-user': async (ctx) => {
      const account = await ctx.step('create-account', () => ({ id: `acct-${ctx.payload.email}` }));
      await ctx.sleep('2s'); // days in real life: the run parks without holding a worker slot
      const answer = await ctx.waitForSignal('approval', { timeout: '1h' }); // null once the timeout passes
      if (!answer?.approved) return { approved: false, account: account.id };
      await ctx.step('send-welcome', () => console.log(`welcome mail to ${ctx.payload.email}`), { retry: { maxAttempts: 5 } });
      return { approved: true, by: answer.by, account: account.id };
    },
  },
});

/** The run now, then at each change until it has ended (or 30 s passed). */
const changes = (runId) => kairos.runs.stream(runId, { signal: AbortSignal.timeout(30_000) });
const show = (run) => console.log(`run ${run.state}: ${run.checkpoints.map((c) => `${c.name} ${c.state}`).join(', ') || 'no checkpoints yet'}`);

await worker.start();
try {
  let run = await kairos.runs.create({ target: { type: 'handler', name: 'onboard-user', queue: 'onboarding' }, payload: { email: 'ada@example.com' } });
  for await (run of changes(run.id)) {
    show(run);
    if (run.state === 'waiting') break; // parked in ctx.waitForSignal('approval')
  }

  const sent = await kairos.runs.signal(run.id, 'approval', { approved: true, by: 'grace' });
  console.log(`signal approval delivered: ${sent.delivered}`);
  for await (run of changes(run.id)) show(run);
  if (run.state !== 'succeeded') throw new Error(`the run ended ${run.state}`);
  console.log(`the signal resumed the run: ${JSON.stringify(run.result)}`);
} finally {
  await worker.stop();
}
