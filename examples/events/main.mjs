// Events: a schedule that starts a run for each paid pro order, whose durable function waits for the shipment's event.
import { KairosClient, KairosWorker } from '@kairos/sdk';

const kairos = new KairosClient({ baseUrl: process.env.KAIROS_URL ?? 'http://127.0.0.1:3000', apiKey: process.env.KAIROS_API_KEY });

const worker = new KairosWorker({
  queue: 'orders',
  handlers: {
    // An event's run gets the event in its payload; the wait parks it until the order's shipment.sent arrives.
    'fulfil-order': async (ctx) => {
      const { orderId } = ctx.payload.event.data;
      await ctx.step('reserve-stock', () => ({ reserved: orderId }));
      const shipment = await ctx.waitForEvent('shipment.sent', { match: { 'data.orderId': orderId }, timeout: '3d' });
      if (!shipment) return { orderId, shipped: false }; // three days, no shipment
      return { orderId, shipped: true, trackingId: shipment.data.trackingId };
    },
  },
});

await worker.start();
try {
  const schedule = await kairos.schedules.put('fulfil-pro-orders', {
    on: { event: 'order.paid', match: { 'data.plan': 'pro' } }, // instead of cron or every
    target: { type: 'handler', name: 'fulfil-order', queue: 'orders' },
  });
  const orderId = `o-${Date.now()}`;
  const free = await kairos.events.send('order.paid', { orderId: `${orderId}-free`, plan: 'free' });
  console.log(`order.paid of a free plan started ${free.runs.length} runs`);
  // An id of the producer's own makes the send idempotent: sending it again answers deduped: true.
  const paid = await kairos.events.send('order.paid', { orderId, plan: 'pro' }, { id: `${orderId}-paid` });
  const runId = paid.runs[0];
  console.log(`order.paid of ${orderId} started run ${runId}`);

  const changes = () => kairos.runs.stream(runId, { signal: AbortSignal.timeout(30_000) });
  let run;
  for await (run of changes()) if (run.state === 'waiting') break; // parked in ctx.waitForEvent
  const shipped = await kairos.events.send('shipment.sent', { orderId, trackingId: 'TRK-1234' });
  console.log(`shipment.sent resumed ${shipped.resumed.join(', ')}`);
  for await (run of changes()); // the stream ends once the run has ended
  if (run.state !== 'succeeded') throw new Error(`the run ended ${run.state}`);
  console.log(`the event's run ${run.state}: ${JSON.stringify(run.result)}`);
  await kairos.schedules.delete(schedule.id);
} finally {
  await worker.stop();
}
