// A worker serving queue "media" with two handlers. It reads DATABASE_URL, REDIS_URL and
// KAIROS_QUEUE_PREFIX like the server does (same defaults), so next to `npm start` it needs none.
import { KairosWorker, NonRetryableError } from '@kairos/sdk';

const worker = new KairosWorker({
  queue: 'media',
  concurrency: 8,
  version: '1.0.0',
  handlers: {
    'resize-image': async ({ runId, attempt, payload, signal }) => {
      if (typeof payload?.url !== 'string') throw new NonRetryableError('payload.url is required');
      // Long work should pass `signal` on (fetch, streams) so cancellation and timeouts stop it.
      const response = await fetch(payload.url, { signal, method: 'HEAD' });
      if (response.status >= 500) throw new Error(`origin answered ${response.status}`); // retried under the run's policy
      return { runId, attempt, contentLength: Number(response.headers.get('content-length') ?? 0) };
    },
    'say-hello': async ({ payload }) => ({ hello: payload?.name ?? 'world' }),
  },
});

await worker.start();
console.log(`worker ${worker.id} serves queue ${worker.queue}`);
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, async () => {
    await worker.stop(); // finishes running handlers within the grace, hands the rest back
    process.exit(0);
  });
}
