/**
 * Subscriptions end to end, against real receivers: every event of a failing run reaches a
 * receiver that refuses its first three deliveries, exactly once in its log deduplicated by
 * Idempotency-Key and with a valid signature, across a kill -9 of the leader that delivers; an
 * endpoint that never answers delays nobody else's deliveries by more than 1 s; an endpoint
 * failing for the whole retry window gets its subscription disabled and the others told, with no
 * secret in the logs; an outage, the slots it swallowed and a failed sensor evaluation are told;
 * filters by labels and schedule ids; Slack messages; the SSRF guard; `schedule.late` for a
 * schedule whose workers are all stopped, within 2 s of the deadline, and `schedule.recovered`
 * once they are back; and nothing written for events nobody listens to.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { StartedKairos } from '@kairos/process';
import { verifySignature } from '@kairos/sdk';
import { FAST_TIMINGS, SPAWNING_TIMEOUT_MS, api, sleep, spawnKairos, startInProcess, useTestEnvironment, waitFor, type ApiClient, type KairosChild } from '../support/kairos.js';

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

  /** `delayMs: Infinity` never answers. */
  constructor(private answer: (n: number) => { status: number; delayMs?: number } = () => ({ status: 200 })) {}

  async start(path = '/hook'): Promise<this> {
    this.server = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk) => (body += chunk));
      req.on('end', () => {
        const n = this.requests.length;
        this.requests.push({ headers: req.headers, body, at: Date.now() });
        const { status, delayMs = 0 } = this.answer(n);
        if (delayMs === Infinity) return;
        setTimeout(() => {
          res.statusCode = status;
          res.end('{}');
        }, delayMs);
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}${path}`;
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

  const receiver = async (answer?: (n: number) => { status: number; delayMs?: number }, path?: string) => {
    const r = await new Receiver(answer).start(path);
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
      // Each failed attempt says why, retried ones too (their reason is on the retry's event, not the run row).
      for (const d of attempts) expect(d, JSON.stringify(d)).toMatchObject({ runId: run.body.id, reasonCode: expect.any(String), reasonText: expect.any(String) });
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

  it('keeps an endpoint that never answers from delaying another subscription by more than 1 s, and disables one failing for the whole window, telling the others and logging no secret', async () => {
    const logged: string[] = [];
    const spies = [process.stdout, process.stderr].map((stream) => {
      const write = stream.write.bind(stream);
      return vi.spyOn(stream, 'write').mockImplementation(((chunk: string | Uint8Array, ...rest: never[]) => {
        logged.push(String(chunk));
        return write(chunk, ...rest);
      }) as typeof stream.write);
    });
    try {
      const silent = await receiver(() => ({ status: 200, delayMs: Infinity }));
      const fast = await receiver();
      // A Slack-style URL: its path is the secret.
      const broken = await receiver(() => ({ status: 500 }), '/services/T0/B0/s3cr3t-t0ken');
      const kairos = await start({ ...FAST_TIMINGS, KAIROS_SUBSCRIPTION_TIMEOUT: '20s', KAIROS_SUBSCRIPTION_RETRY_WINDOW: '2s', LOG_LEVEL: 'log' });
      const client = api(kairos.url);
      const secret = await secretOf(client);
      const subscribe = async (url: string, events: string[]) => (await client.post('/v1/subscriptions', { url, events })).body.id as string;
      await subscribe(silent.url, ['run.dead']);
      const fastId = await subscribe(fast.url, ['run.dead', 'subscription.disabled']);
      const brokenId = await subscribe(broken.url, ['run.dead']);

      // Three dead runs, one after another: the silent endpoint holds its first delivery for good.
      const runs: string[] = [];
      for (let i = 0; i < 3; i++) {
        runs.push((await client.post('/v1/runs', { target: { type: 'handler', name: 'fail' }, retry: { maxAttempts: 1 } })).body.id as string);
        await sleep(300);
      }
      await waitFor(async () => (fast.bodies().filter((b) => b.type === 'run.dead').length === 3 ? true : undefined), 'the fast endpoint to get all three', 10_000, 50);
      expect(new Set(fast.bodies().map((b) => b.data.runId))).toEqual(new Set(runs));
      // From when each event was fanned out to the fast endpoint's delivery to when it arrived there.
      const fanned = new Map<string, string>(
        (await client.get(`/v1/subscriptions/${fastId}/deliveries`)).body.items.map((d: { eventId: string; createdAt: string }) => [d.eventId, d.createdAt]),
      );
      for (const r of fast.requests) {
        const body = JSON.parse(r.body);
        const delay = r.at - Date.parse(fanned.get(body.id)!);
        expect(delay, `${body.type} ${body.id} reached the fast endpoint ${delay} ms after its delivery was written`).toBeLessThanOrEqual(1_000);
      }
      expect(silent.requests.length).toBe(1);

      // The broken endpoint answered 500 for more than the 2 s window: disabled, and the others are told.
      const disabled = await waitFor(async () => {
        const sub = (await client.get(`/v1/subscriptions/${brokenId}`)).body;
        return sub.state === 'disabled' ? sub : undefined;
      }, 'the broken subscription to be disabled', 20_000);
      expect(disabled.disabledReason).toContain('500');
      const told = await waitFor(async () => fast.bodies().find((b) => b.type === 'subscription.disabled'), 'subscription.disabled at the fast endpoint');
      expect(told.data).toMatchObject({ subscriptionId: brokenId, host: new URL(broken.url).host });
      expect(JSON.stringify(told)).not.toContain('s3cr3t');
      const brokenDeliveries = (await client.get(`/v1/subscriptions/${brokenId}/deliveries`)).body.items;
      expect(brokenDeliveries.every((d: { state: string }) => d.state === 'failed')).toBe(true);
      expect(brokenDeliveries[0].attempts.length).toBeGreaterThanOrEqual(2);
      // A resumed subscription forgets its failures.
      expect((await client.post(`/v1/subscriptions/${brokenId}/resume`)).body).toMatchObject({ state: 'active', disabledReason: null, failingSince: null });
      // Neither the signing secret nor a URL's secret path reached the logs.
      const output = logged.join('');
      expect(output).toContain('disabled');
      expect(output).not.toContain(secret);
      expect(output).not.toContain('s3cr3t-t0ken');
    } finally {
      for (const spy of spies) spy.mockRestore();
    }
  }, 60_000);

  it('tells of an outage, the slots it swallowed, and a failed sensor evaluation', async () => {
    const hook = await receiver();
    const env = { ...FAST_TIMINGS };
    let kairos = await start(env);
    let client = api(kairos.url);
    await client.post('/v1/subscriptions', { url: hook.url, events: ['outage.detected', 'schedule.missed', 'sensor.failed'] });
    const schedule = (await client.post('/v1/schedules', { name: 'every-second', every: '1s', catchup: { mode: 'none' }, target: { type: 'handler', name: 'echo' } })).body;
    const sensor = (await client.post('/v1/sensors', { name: 'broken-sensor', every: '1h', target: { type: 'handler', name: 'fail' }, run: { target: { type: 'handler', name: 'echo' } } })).body;
    const failed = await waitFor(async () => hook.bodies().find((b) => b.type === 'sensor.failed'), 'sensor.failed');
    expect(failed.data).toMatchObject({ sensorId: sensor.id, sensorName: 'broken-sensor', reasonCode: expect.any(String) });

    // No scheduler for over two seconds: an outage, and the slots of it catch-up (none) does not fire.
    await kairos.app.close();
    started.splice(started.indexOf(kairos), 1);
    await sleep(2_500);
    kairos = await start(env);
    client = api(kairos.url);
    // The scheduler's own outage; a busy machine may also report a partition whose owner lapsed.
    const outage = await waitFor(async () => hook.bodies().find((b) => b.type === 'outage.detected' && b.data.partition === null), 'outage.detected');
    expect(outage.data).toMatchObject({ reasonCode: 'SCHEDULER_STOPPED', partition: null, link: null });
    expect(Date.parse(String(outage.data.endedAt)) - Date.parse(String(outage.data.startedAt))).toBeGreaterThanOrEqual(2_000);
    // One schedule.missed per swallowed slot: at least two, each told once (a delivery may still be on its way).
    const missed = await waitFor(async () => {
      const got = hook.bodies().filter((b) => b.type === 'schedule.missed');
      const { rows } = await t.db.query(`SELECT count(*)::int AS n FROM ticks WHERE schedule_id = $1 AND outcome = 'missed'`, [schedule.id]);
      return got.length >= 2 && got.length === rows[0].n ? got : undefined;
    }, 'schedule.missed for each swallowed slot');
    for (const m of missed) expect(m.data).toMatchObject({ scheduleId: schedule.id, scheduleName: 'every-second', reasonCode: expect.any(String) });
    expect(new Set(missed.map((m) => m.data.scheduledFor)).size).toBe(missed.length);
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
    // The endpoint has the ping; Kairos records the attempt once the answer is back.
    const delivered = await waitFor(async () => {
      const items = (await client.get(`/v1/subscriptions/${slackId}/deliveries`)).body.items;
      return items[0]?.attempts.length > 0 ? items : undefined;
    }, 'the ping’s attempt to be recorded');
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

      // Slots that fall due while the schedule is paused are not late: pausing is choosing not to run them.
      const pausedAt = Date.now();
      await client.post(`/v1/schedules/${schedule.body.id}/pause`);
      await sleep(2_500);
      await client.post(`/v1/schedules/${schedule.body.id}/resume`);
      const resumedAt = Date.now();
      const { rows: swallowed } = await waitFor(async () => {
        const judged = await t.db.query(`SELECT deadline_checked_through AS through FROM schedules WHERE id = $1`, [schedule.body.id]);
        return judged.rows[0].through.getTime() > resumedAt ? judged : undefined;
      }, 'the slots after the resume to be judged');
      expect(swallowed).toHaveLength(1);
      const lateInPause = late.bodies().filter((b) => b.type === 'schedule.late' && Date.parse(String(b.data.scheduledFor)) > pausedAt && Date.parse(String(b.data.scheduledFor)) < resumedAt);
      // (A slot after the resume may still be late: skipped beside the catch-up run of the last paused slot.)
      expect(lateInPause).toEqual([]);
    }, 60_000);
  });
});
