/**
 * Events in the dashboard, in a real headless Chromium against the API alone: a schedule started by
 * events (`on` order.paid where data.plan is "pro") and two events sent through REST, one it
 * matches and one it does not. The Events page lists both, newest first, with what each started;
 * the matching event's page shows its data and links the run it started; that run's page links
 * back to its event; the schedule's page says in words what starts it instead of listing fire
 * times; and a name no event has shows how to send one. A durable function parked by
 * ctx.waitForEvent says on its run page what it waits for and until when; the event that resumes
 * it lists it among the waits it resumed. Each page is saved as a screenshot under test-results/ui/.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromium, type Browser, type Page } from 'playwright-core';
import { build } from 'vite';
import { KairosWorker } from '@kairos/sdk';
import { isUiStale } from '../../scripts/build-state.mjs';
import { withDirectoryLock } from '../support/build.js';
import { runInState, useKairos } from '../support/kairos.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SCREENSHOTS = `${ROOT}test-results/ui`;
const CHROMIUM_FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'];

describe('events in the dashboard', () => {
  let browser: Browser;
  let page: Page;

  const shot = (name: string) => page.screenshot({ path: `${SCREENSHOTS}/${name}.png`, fullPage: true });

  beforeAll(async () => {
    // The pages under test are the dashboard's newest: build it when a source is newer than dist/ui (one build at a time).
    if (isUiStale(ROOT) || !existsSync(`${ROOT}dist/ui/index.html`)) {
      await withDirectoryLock(join(tmpdir(), 'kairos-ui-build.lock'), async () => {
        if (isUiStale(ROOT)) await build({ configFile: `${ROOT}apps/ui/vite.config.ts`, logLevel: 'warn' });
      });
    }
    mkdirSync(SCREENSHOTS, { recursive: true });
  }, 180_000);

  const { t, kairos, client } = useKairos();

  beforeAll(async () => {
    // A live worker of the echo handler, so schedules may name it.
    await t.db.query(`INSERT INTO workers (id, queue, handlers, version, started_at, last_seen_at) VALUES ('host:1:default', 'default', '{echo}', '1.0.0', now(), now())`);
    browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: CHROMIUM_FLAGS });
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
  });

  let scheduleId = '';
  let proEvent: { id: string; runs: string[] };
  let freeEvent: { id: string; runs: string[] };

  it('lists the events sent, newest first, with the runs each started', async () => {
    const schedule = await client.post('/v1/schedules', {
      name: 'welcome-pro',
      on: { event: 'order.paid', match: { 'data.plan': 'pro' } },
      target: { type: 'handler', name: 'echo' },
    });
    expect(schedule.status, JSON.stringify(schedule.body)).toBe(201);
    expect(schedule.body.on).toEqual({ event: 'order.paid', match: { 'data.plan': 'pro' } });
    expect(schedule.body.nextFireAt).toBeNull();
    scheduleId = schedule.body.id as string;

    const pro = await client.post('/v1/events', { name: 'order.paid', data: { plan: 'pro', orderId: 'o-1' } });
    expect(pro.status, JSON.stringify(pro.body)).toBe(202);
    expect(pro.body.runs).toHaveLength(1);
    proEvent = pro.body;
    const free = await client.post('/v1/events', { name: 'order.paid', data: { plan: 'free', orderId: 'o-2' } });
    expect(free.status, JSON.stringify(free.body)).toBe(202);
    expect(free.body.runs).toEqual([]);
    freeEvent = free.body;

    await page.goto(`${kairos.url}/ui`);
    await page.getByRole('link', { name: 'Events' }).click();
    const table = page.getByTestId('events');
    await table.waitFor();
    expect(new URL(page.url()).pathname).toBe('/ui/events');
    expect(await page.getByRole('link', { name: 'Events' }).getAttribute('aria-current')).toBe('page');
    const rows = table.locator('tbody tr');
    expect(await rows.evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-event-id')))).toEqual([freeEvent.id, proEvent.id]);
    const cells = async (id: string) => (await table.locator(`tr[data-event-id="${id}"] td`).allTextContents()).map((c) => c.trim());
    const [name, id, , ...counts] = await cells(proEvent.id);
    expect([name, id, ...counts]).toEqual(['order.paid', proEvent.id, '1', '0', '0']);
    expect((await cells(freeEvent.id)).slice(3)).toEqual(['0', '0', '0']);
    await shot('events');
  });

  it("shows an event's data and links the run it started; the run links back to its event", async () => {
    await page.getByTestId('events').locator(`tr[data-event-id="${proEvent.id}"]`).getByRole('link', { name: 'order.paid' }).click();
    await page.getByRole('heading', { name: 'Event order.paid' }).waitFor();
    expect(new URL(page.url()).pathname).toBe(`/ui/events/${encodeURIComponent(proEvent.id)}`);
    expect(await page.getByTestId('event-lead').textContent()).toContain('started 1 run, skipped no schedule, resumed no wait');
    expect(JSON.parse((await page.getByTestId('event-data').textContent())!)).toEqual({ plan: 'pro', orderId: 'o-1' });
    const runs = page.getByTestId('event-runs');
    const [runId] = proEvent.runs;
    const runLink = runs.getByRole('link', { name: `run ${runId}` });
    await runLink.waitFor();
    expect(await runs.locator('li').count()).toBe(1);
    // Its schedule is read for the run: the run's schedule links the schedule that matched.
    await runs.getByRole('link', { name: 'its schedule' }).waitFor();
    expect(await runs.getByRole('link', { name: 'its schedule' }).getAttribute('href')).toBe(`/ui/schedules/${scheduleId}`);
    await shot('event');

    await runLink.click();
    await page.getByRole('heading', { name: `Run ${runId}` }).waitFor();
    const run = (await client.get(`/v1/runs/${runId}`)).body;
    expect([run.origin, run.eventId, run.scheduleId]).toEqual(['event', proEvent.id, scheduleId]);
    const back = page.getByTestId('run-event').getByRole('link', { name: `event ${proEvent.id}` });
    await back.waitFor();
    expect(await page.locator('.lead').textContent()).toContain(`started by event ${proEvent.id}`);
    await shot('run-event');

    await back.click();
    await page.getByRole('heading', { name: 'Event order.paid' }).waitFor();
    expect(new URL(page.url()).pathname).toBe(`/ui/events/${encodeURIComponent(proEvent.id)}`);
  });

  it('tells the event that matched nothing what would have started a run', async () => {
    await page.goto(`${kairos.url}/ui/events/${encodeURIComponent(freeEvent.id)}`);
    await page.getByRole('heading', { name: 'Event order.paid' }).waitFor();
    expect(await page.getByTestId('event-lead').textContent()).toContain('started no run');
    expect(await page.getByTestId('no-runs-started').textContent()).toContain('"on": { "event": "order.paid" }');
  });

  it('says in words what starts a schedule of events, instead of its next fires', async () => {
    await page.goto(`${kairos.url}/ui/schedules/${scheduleId}`);
    await page.getByRole('heading', { name: 'welcome-pro' }).waitFor();
    expect(await page.getByTestId('schedule-timing').textContent()).toBe('runs on each event order.paid where data.plan = "pro"');
    expect(await page.getByTestId('schedule-trigger').textContent()).toContain('It runs on each event order.paid where data.plan = "pro"');
    expect(await page.getByRole('heading', { name: 'Next ten fires' }).count()).toBe(0);
    // Nor has it slots to backfill, or the policies of slots (time zone, catch-up, calendar).
    const terms = await page.locator('#definition + dl dt').allTextContents();
    expect(terms).toContain('Timing');
    expect(terms.filter((term) => ['Time zone', 'DST', 'Catch-up', 'Calendar', 'Bounds'].includes(term))).toEqual([]);
    expect(await page.getByText('Backfill').count()).toBe(0);
    // Its run is among its runs, made by the event.
    const row = page.locator(`tr[data-run-id="${proEvent.runs[0]}"]`);
    await row.waitFor();
    expect(await row.locator('td').nth(1).textContent()).toBe('event');
    await shot('schedule-event');
  });

  it('says what a waiting durable function waits for, and the event that resumes it lists it', async () => {
    // A durable function on a worker of this process (the SDK from source), on a queue of its own.
    const env = t.env();
    const worker = new KairosWorker({
      databaseUrl: env.DATABASE_URL!,
      redisUrl: env.REDIS_URL || null,
      queuePrefix: env.KAIROS_QUEUE_PREFIX!,
      queue: 'orders',
      concurrency: 2,
      handlers: {
        'ship-order': async (ctx) => {
          const shipment = await ctx.waitForEvent('order.shipped', { match: { 'data.orderId': (ctx.payload as { orderId: string }).orderId }, timeout: '1h' });
          return { shipment };
        },
      },
      logger: { log: () => undefined, warn: () => undefined, error: () => undefined },
    });
    await worker.start();
    try {
      const created = await client.post('/v1/runs', { target: { type: 'handler', name: 'ship-order', queue: 'orders' }, payload: { orderId: 'o-7' } });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      const runId = created.body.id as string;
      await runInState(client, runId, 'waiting');

      await page.goto(`${kairos.url}/ui/runs/${runId}`);
      const note = page.getByTestId('awaited-event');
      await note.waitFor();
      expect(await note.textContent()).toMatch(/It waits for event order\.shipped where data\.orderId = "o-7", until \d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ\./);
      const checkpoint = page.getByTestId('checkpoint-event:order.shipped');
      expect(await checkpoint.textContent()).toContain('the run waits for a matching event');
      const story = page.getByRole('region', { name: 'Events', exact: true });
      await expect.poll(() => story.textContent()).toContain('awaiting_eventwaits for event order.shipped where data.orderId = "o-7", until');
      await shot('run-awaiting-event');

      // Another order's shipment leaves it waiting; its own resumes it.
      const other = await client.post('/v1/events', { name: 'order.shipped', data: { orderId: 'o-8' } });
      expect(other.body.resumed).toEqual([]);
      const own = await client.post('/v1/events', { name: 'order.shipped', data: { orderId: 'o-7', carrier: 'DHL' } });
      expect(own.status, JSON.stringify(own.body)).toBe(202);
      expect(own.body.resumed).toEqual([runId]);
      // The wait is over once the event is stored: the run left waiting in the event's transaction.
      expect((await client.get(`/v1/runs/${runId}`)).body.state).not.toBe('waiting');

      await page.goto(`${kairos.url}/ui/events/${encodeURIComponent(own.body.id)}`);
      await page.getByRole('heading', { name: 'Event order.shipped' }).waitFor();
      expect(await page.getByTestId('event-lead').textContent()).toContain('started no run, skipped no schedule, resumed 1 wait');
      const resumed = page.getByTestId('event-resumed');
      await resumed.getByRole('link', { name: `run ${runId}` }).waitFor();
      await shot('event-resumed');

      await resumed.getByRole('link', { name: `run ${runId}` }).click();
      await page.getByRole('heading', { name: `Run ${runId}` }).waitFor();
      await expect.poll(() => checkpoint.textContent()).toContain('a matching event arrived');
      expect(await page.getByTestId('awaited-event').count()).toBe(0);
      await expect.poll(() => story.textContent()).toContain(`event_receivedreceived event ${own.body.id}`);
    } finally {
      await worker.stop();
    }
  }, 60_000);

  it('shows how to send an event when none has the name searched for', async () => {
    await page.goto(`${kairos.url}/ui/events`);
    await page.getByTestId('events').waitFor();
    await page.getByRole('searchbox', { name: 'Name' }).fill('invoice.sent');
    await page.getByRole('button', { name: 'Search' }).click();
    const empty = page.getByTestId('no-events');
    await empty.waitFor();
    const text = (await empty.textContent())!;
    expect(text).toContain('No events named invoice.sent.');
    expect(text).toContain(`curl -s -XPOST ${kairos.url}/v1/events`);
    expect(text).toContain('"name":"invoice.sent"');
    await shot('events-empty');
  });
});
