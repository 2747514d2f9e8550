/**
 * Subscriptions end to end, against real receivers: every event of a failing run reaches a
 * receiver that refuses its first three deliveries, exactly once in its log deduplicated by
 * Idempotency-Key and with a valid signature, across a kill -9 of the process that delivers; a
 * slow endpoint delays nobody else's deliveries; an endpoint failing for the whole retry window
 * gets its subscription disabled and the others told; filters by labels and schedule ids; Slack
 * messages; the SSRF guard; `schedule.late` for a schedule whose workers are all stopped, within
 * 2 s of the deadline, and `schedule.recovered` once they are back; and nothing written for
 * events nobody listens to.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { StartedKairos } from '@kairos/process';
import { verifySignature } from '@kairos/sdk';
import { FAST_TIMINGS, SPAWNING_TIMEOUT_MS, api, spawnKairos, startInProcess, useTestEnvironment, waitFor, type ApiClient, type KairosChild } from '../support/kairos.js';

interface Received {
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
}

/** An HTTP endpoint that records every request and answers as `answer` says for the n-th (0-based). */
class Receiver {
  readonly requests: Received[] = [];
  private server!: Server;
  url = '';

  constructor(private answer: (n: number) => { status: number; delayMs?: number } = () => ({ status: 200 })) {}

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk) => (body += chunk));
      req.on('end', () => {
        const n = this.requests.length;
        this.requests.push({ headers: req.headers, body, at: Date.now() });
        const { status, delayMs = 0 } = this.answer(n);
        setTimeout(() => {
          res.statusCode = status;
          res.end('{}');
        }, delayMs);
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hook`;
    return this;
  }

  /** The requests it took (2xx), deduplicated by Idempotency-Key: what a receiver keeps. */
  kept(statusOf: (n: number) => number = (n) => this.answer(n).status): Map<string, Received> {
    const kept = new Map<string, Received>();
    this.requests.forEach((r, n) => {
      const status = statusOf(n);
      if (status >= 200 && status < 300 && !kept.has(String(r.headers['idempotency-key']))) kept.set(String(r.headers['idempotency-key']), r);
    });
    return kept;
  }

  bodies(): { id: string; type: string; data: Record<string, unknown> }[] {
    return this.requests.map((r) => JSON.parse(r.body));
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

const ALLOW_LOOPBACK = { KAIROS_HTTP_ALLOWLIST: '127.0.0.1' };

async function secretOf(client: ApiClient): Promise<string> {
  return (await client.get('/v1/signing-secret')).body.secret as string;
}

describe('subscriptions', () => {
  const t = useTestEnvironment();
  const receivers: Receiver[] = [];
  const started: StartedKairos[] = [];
  const children: KairosChild[] = [];

  const receiver = async (answer?: (n: number) => { status: number; delayMs?: number }) => {
    const r = await new Receiver(answer).start();
    receivers.push(r);
    return r;
  };
  const start = async (env: Record<string, string> = {}, roles?: ('api' | 'scheduler' | 'worker')[]) => {
    const kairos = await startInProcess(t.env({ ...ALLOW_LOOPBACK, ...env }), roles);
    started.push(kairos);
    return kairos;
  };

  afterEach(async () => {
    for (const child of children.splice(0)) child.process.kill('SIGKILL');
    await Promise.all(started.splice(0).map((k) => k.app.close()));
    await Promise.all(receivers.splice(0).map((r) => r.stop()));
    // Each case starts from no subscription, so one case's deliveries never reach another's receivers.
    await t.db.query('DELETE FROM subscriptions');
  });

  it(
    "delivers every event of a failing run once, signed, to a receiver that refuses its first three, across a kill -9 of the delivering process",
    async () => {
      const hook = await receiver((n) => ({ status: n < 3 ? 503 : 200 }));
      const env = t.env({ ...FAST_TIMINGS, ...ALLOW_LOOPBACK });
      let child = spawnKairos('kairos', env);
      children.push(child);
      let client = api(await child.ready);
      const secret = await secretOf(client);
      const subscription = await client.post('/v1/subscriptions', { url: hook.url, events: ['run.failed', 'run.dead'] });
      expect(subscription.status).toBe(201);
      const run = await client.post('/v1/runs', {
        target: { type: 'handler', name: 'fail' },
        retry: { maxAttempts: 3, backoff: { type: 'fixed', base: '200ms' } },
      });
      expect(run.status).toBe(201);

      // Killed once the receiver has refused a delivery: what was in flight or still due is the next process's.
      await waitFor(async () => (hook.requests.length >= 2 ? true : undefined), 'the first refused deliveries', 30_000);
      child.process.kill('SIGKILL');
      await child.exited;
      child = spawnKairos('kairos', env);
      children.push(child);
      client = api(await child.ready);

      const { rows: events } = await t.db.query<{ id: string; topic: string }>(
        `SELECT id::text, topic FROM outbox WHERE aggregate_id = $1 AND topic IN ('run.failed', 'run.dead') ORDER BY id`,
        [run.body.id],
      );
      await waitFor(
        async () => {
          const { rows } = await t.db.query<{ id: string; topic: string }>(
            `SELECT id::text, topic FROM outbox WHERE aggregate_id = $1 AND topic IN ('run.failed', 'run.dead') ORDER BY id`,
            [run.body.id],
          );
          const kept = hook.kept();
          return rows.length === 4 && rows.every((e) => kept.has(e.id)) ? true : undefined;
        },
        'all four events (three failed attempts, the dead run) in the receiver\'s log',
        60_000,
        200,
      );
      const { rows: all } = await t.db.query<{ id: string; topic: string }>(
        `SELECT id::text, topic FROM outbox WHERE aggregate_id = $1 AND topic IN ('run.failed', 'run.dead') ORDER BY id`,
        [run.body.id],
      );
      expect(events.length).toBeLessThanOrEqual(4);
      // The last failed attempt and the run's death commit together (the death's event first).
      expect(all.map((e) => e.topic).sort()).toEqual(['run.dead', 'run.failed', 'run.failed', 'run.failed']);
      const kept = hook.kept();
      expect([...kept.keys()].sort()).toEqual(all.map((e) => e.id).sort());
      for (const delivery of hook.requests) {
        expect(verifySignature({ secret, header: String(delivery.headers['kairos-signature']), body: delivery.body }), delivery.body).toMatchObject({ valid: true });
        const body = JSON.parse(delivery.body);
        expect(body.id).toBe(delivery.headers['idempotency-key']);
        expect(delivery.headers['kairos-event-type']).toBe(body.type);
      }
      const attempts = [...kept.values()].map((r) => JSON.parse(r.body)).filter((b) => b.type === 'run.failed').map((b) => b.data);
      expect(attempts.map((d) => d.attempt).sort()).toEqual([1, 2, 3]);
      expect(attempts.map((d) => d.willRetry).sort()).toEqual([false, true, true]);
      const dead = [...kept.values()].map((r) => JSON.parse(r.body)).find((b) => b.type === 'run.dead');
      expect(dead).toMatchObject({ namespace: 'default', data: { runId: run.body.id, reasonCode: expect.any(String) } });

      // Its deliveries show each attempt, the refused ones with their status.
      const deliveries = await client.get(`/v1/subscriptions/${subscription.body.id}/deliveries?limit=100`);
      expect(deliveries.status).toBe(200);
      expect(deliveries.body.items.every((d: { state: string }) => d.state === 'delivered')).toBe(true);
      const refused = deliveries.body.items.flatMap((d: { attempts: { statusCode: number | null }[] }) => d.attempts).filter((a: { statusCode: number | null }) => a.statusCode === 503);
      expect(refused.length).toBeGreaterThanOrEqual(2);
    },
    SPAWNING_TIMEOUT_MS * 2 + 60_000,
  );

  it('keeps a slow endpoint from delaying another subscription, and disables an endpoint that fails for the whole window, telling the others', async () => {
    const slow = await receiver(() => ({ status: 200, delayMs: 4_000 }));
    const fast = await receiver();
    const broken = await receiver(() => ({ status: 500 }));
    const kairos = await start({ ...FAST_TIMINGS, KAIROS_SUBSCRIPTION_TIMEOUT: '10s', KAIROS_SUBSCRIPTION_RETRY_WINDOW: '2s' });
    const client = api(kairos.url);
    const subscribe = async (url: string, events: string[]) => (await client.post('/v1/subscriptions', { url, events })).body.id as string;
    const slowId = await subscribe(slow.url, ['run.dead']);
    const fastId = await subscribe(fast.url, ['run.dead', 'subscription.disabled']);
    const brokenId = await subscribe(broken.url, ['run.dead']);

    // Three dead runs: the slow endpoint holds each delivery 4 s; the fast one has all three long before.
    const runs = await Promise.all([0, 1, 2].map(async () => (await client.post('/v1/runs', { target: { type: 'handler', name: 'fail' }, retry: { maxAttempts: 1 } })).body.id as string));
    const createdAt = Date.now();
    await waitFor(async () => (fast.bodies().filter((b) => b.type === 'run.dead').length === 3 ? true : undefined), 'the fast endpoint to get all three', 10_000, 50);
    expect(Date.now() - createdAt, 'the fast endpoint waited for nobody').toBeLessThan(4_000);
    expect(slow.requests.length).toBeLessThan(3);
    expect(new Set(fast.bodies().map((b) => b.data.runId))).toEqual(new Set(runs));

    // The broken endpoint answered 500 for more than the 2 s window: disabled, and the others are told.
    const disabled = await waitFor(async () => {
      const s = (await client.get(`/v1/subscriptions/${brokenId}`)).body;
      return s.state === 'disabled' ? s : undefined;
    }, 'the broken subscription to be disabled', 20_000);
    expect(disabled.disabledReason).toContain('500');
    const told = await waitFor(async () => fast.bodies().find((b) => b.type === 'subscription.disabled'), 'subscription.disabled at the fast endpoint');
    expect(told.data).toMatchObject({ subscriptionId: brokenId, host: new URL(broken.url).host });
    expect(JSON.stringify(told)).not.toContain('/hook');
    const brokenDeliveries = (await client.get(`/v1/subscriptions/${brokenId}/deliveries`)).body.items;
    expect(brokenDeliveries.every((d: { state: string }) => d.state === 'failed')).toBe(true);
    // A resumed subscription forgets its failures; the slow one got everything in the end.
    expect((await client.post(`/v1/subscriptions/${brokenId}/resume`)).body).toMatchObject({ state: 'active', disabledReason: null, failingSince: null });
    await waitFor(async () => (slow.requests.length === 3 ? true : undefined), 'the slow endpoint to get all three', 20_000);
    expect((await client.get(`/v1/subscriptions/${slowId}`)).body.state).toBe('active');
    expect(fastId).toBeTypeOf('string');
  }, 60_000);

  it('filters by labels and schedule ids, speaks Slack, and sends a test ping', async () => {
    const all = await receiver();
    const billing = await receiver();
    const one = await receiver();
    const slack = await receiver();
    const kairos = await start({ ...FAST_TIMINGS, KAIROS_PUBLIC_URL: 'https://kairos.example.com' });
    const client = api(kairos.url);
    const a = (await client.post('/v1/schedules', { name: 'billing-report', every: '1h', labels: { team: 'billing' }, target: { type: 'handler', name: 'echo' }, paused: true })).body;
    const b = (await client.post('/v1/schedules', { name: 'search-index', every: '1h', labels: { team: 'search' }, target: { type: 'handler', name: 'echo' }, paused: true })).body;
    await client.post('/v1/subscriptions', { url: all.url, events: ['schedule.resumed'] });
    await client.post('/v1/subscriptions', { url: billing.url, events: ['schedule.resumed'], filter: { labels: { team: 'billing' } } });
    await client.post('/v1/subscriptions', { url: one.url, events: ['schedule.resumed'], filter: { scheduleIds: [b.id] } });
    const slackId = (await client.post('/v1/subscriptions', { url: slack.url, events: ['schedule.resumed'], format: 'slack', filter: { labels: { team: 'billing' } } })).body.id;
    await client.post(`/v1/schedules/${a.id}/resume`);
    await client.post(`/v1/schedules/${b.id}/resume`);

    await waitFor(async () => (all.requests.length === 2 && billing.requests.length === 1 && one.requests.length === 1 && slack.requests.length === 1 ? true : undefined), 'the filtered deliveries');
    expect(new Set(all.bodies().map((body) => body.data.scheduleName))).toEqual(new Set(['billing-report', 'search-index']));
    expect(billing.bodies()[0]).toMatchObject({ type: 'schedule.resumed', namespace: 'default', data: { scheduleId: a.id, scheduleName: 'billing-report', link: `https://kairos.example.com/ui/schedules/${a.id}` } });
    expect(one.bodies()[0]!.data.scheduleId).toBe(b.id);
    const message = JSON.parse(slack.requests[0]!.body);
    expect(message.text).toContain('billing-report');
    expect(message.blocks[0]).toMatchObject({ type: 'section', text: { type: 'mrkdwn' } });
    expect(JSON.stringify(message.blocks)).toContain(`<https://kairos.example.com/ui/schedules/${a.id}|Open in Kairos>`);

    const test = await client.post(`/v1/subscriptions/${slackId}/test`);
    expect(test.status).toBe(202);
    await waitFor(async () => (slack.requests.length === 2 ? true : undefined), 'the ping');
    expect(slack.requests[1]!.headers['idempotency-key']).toBe(test.body.eventId);
    expect(JSON.parse(slack.requests[1]!.body).text).toContain('test delivery');
    expect(all.requests.length).toBe(2);
    const delivered = (await client.get(`/v1/subscriptions/${slackId}/deliveries`)).body.items;
    expect(delivered.map((d: { eventType: string }) => d.eventType)).toEqual(['ping', 'schedule.resumed']);
    expect(delivered[0].attempts).toEqual([expect.objectContaining({ attempt: 1, statusCode: 200, error: null })]);
  });

  it("refuses a private address at delivery as it does at declaration, and writes no run outcome nobody listens to", async () => {
    // Without the allow-list, a loopback URL is refused when declared...
    const kairos = await start({ ...FAST_TIMINGS, KAIROS_HTTP_ALLOWLIST: '' });
    const client = api(kairos.url);
    const refused = await client.post('/v1/subscriptions', { url: 'http://127.0.0.1:9/hook', events: ['run.dead'] });
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ code: 'VALIDATION_FAILED', field: 'url' });
    // ...and a name that resolves to it is refused when dialled.
    const named = await client.post('/v1/subscriptions', { url: 'http://localhost:9/hook', events: ['run.succeeded'] });
    expect(named.status).toBe(201);
    const run = await client.post('/v1/runs', { target: { type: 'handler', name: 'echo' } });
    const attempt = await waitFor(async () => (await client.get(`/v1/subscriptions/${named.body.id}/deliveries`)).body.items[0]?.attempts[0], 'the refused attempt');
    expect(attempt).toMatchObject({ statusCode: null, error: expect.stringMatching(/^refused: localhost resolves to/) });
    await client.delete(`/v1/subscriptions/${named.body.id}`);

    // With nobody listening, a run's success writes no event.
    const quiet = await client.post('/v1/runs', { target: { type: 'handler', name: 'echo' } });
    await waitFor(async () => ((await client.get(`/v1/runs/${quiet.body.id}`)).body.state === 'succeeded' ? true : undefined), 'the quiet run');
    const { rows } = await t.db.query(`SELECT topic FROM outbox WHERE aggregate_id = ANY($1::uuid[]) ORDER BY id`, [[run.body.id, quiet.body.id]]);
    expect(rows).toEqual([{ topic: 'run.succeeded' }]);
  });

  describe('deadlines', () => {
    let late: Receiver;

    beforeAll(async () => {
      late = await new Receiver().start();
    });
    afterAll(async () => {
      await late.stop();
    });

    it('reports schedule.late within 2 s of the deadline while no worker runs, once per slot, and schedule.recovered once workers are back', async () => {
      // The worker registers its handlers, then stops: from then on every run of the schedule stays queued.
      const worker = await startInProcess(t.env({ ...FAST_TIMINGS }), ['worker']);
      const kairos = await start({ ...FAST_TIMINGS }, ['api', 'scheduler']);
      const client = api(kairos.url);
      await client.post('/v1/subscriptions', { url: late.url, events: ['schedule.late', 'schedule.recovered'] });
      const schedule = await client.post('/v1/schedules', { name: 'heartbeat', every: '1s', expect: { succeededWithin: '1s' }, target: { type: 'handler', name: 'echo' } });
      expect(schedule.status).toBe(201);
      expect(schedule.body).toMatchObject({ expect: { succeededWithin: '1s' }, lateSince: null });
      await worker.app.close();

      const reports = await waitFor(async () => {
        const got = late.requests.map((r) => ({ ...JSON.parse(r.body), receivedAt: r.at })).filter((b) => b.type === 'schedule.late');
        return got.length >= 3 ? got : undefined;
      }, 'three late slots', 20_000);
      for (const report of reports) {
        expect(report.data).toMatchObject({ scheduleId: schedule.body.id, scheduleName: 'heartbeat', expect: { succeededWithin: '1s' } });
        // The first late slot's run waits in the queue; the slots after it were skipped beside it (overlap skip).
        expect([`triggered queued`, `skipped null`]).toContain(`${report.data.tickOutcome} ${report.data.runState}`);
        expect(report.receivedAt - Date.parse(report.data.deadline), `${report.data.scheduledFor} reported ${report.receivedAt - Date.parse(report.data.deadline)} ms after its deadline`).toBeLessThanOrEqual(2_000);
      }
      const slots = reports.map((r) => r.data.scheduledFor);
      expect(new Set(slots).size).toBe(slots.length);
      expect((await client.get(`/v1/schedules/${schedule.body.id}`)).body.lateSince).toBe(reports[0]!.data.scheduledFor);
      const metrics = await (await fetch(`${kairos.url}/metrics`)).text();
      expect(Number(/^kairos_schedule_late_total (\d+)/m.exec(metrics)?.[1])).toBeGreaterThanOrEqual(3);

      // Workers come back: a later slot succeeds within its second, and the schedule has recovered.
      started.push(await startInProcess(t.env({ ...FAST_TIMINGS }), ['worker']));
      const recovered = await waitFor(() => Promise.resolve(late.bodies().find((b) => b.type === 'schedule.recovered')), 'schedule.recovered', 30_000);
      expect(recovered.data).toMatchObject({ scheduleId: schedule.body.id, lateSince: reports[0]!.data.scheduledFor });
      expect((await client.get(`/v1/schedules/${schedule.body.id}`)).body.lateSince).toBeNull();
      // Each slot was judged once: no slot reported late twice.
      const allLate = late.bodies().filter((b) => b.type === 'schedule.late').map((b) => b.data.scheduledFor);
      expect(new Set(allLate).size).toBe(allLate.length);
    }, 60_000);
  });
});
