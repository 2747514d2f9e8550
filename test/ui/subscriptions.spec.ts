/**
 * The dashboard's subscriptions and late schedules in a real headless Chromium, against the API
 * and the scheduler (whose leader delivers) with loopback webhooks allowed: the subscriptions page
 * lists a subscription made through REST, its URL without the token; a test ping sent through REST
 * to a receiver that refuses the first request shows on the subscription's page as delivered, with
 * one bar per attempt (refused, then taken), and a second ping sent with the page's button adds a
 * delivery and its bar; a schedule whose lateness is written with SQL (so nothing has to miss a
 * deadline) carries the late badge in the list and on its page, which tells its deadline. Each page
 * is saved as a screenshot under test-results/ui/.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromium, type Browser, type Page } from 'playwright-core';
import { build } from 'vite';
import { useKairos, waitFor } from '../support/kairos.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SCREENSHOTS = `${ROOT}test-results/ui`;
const CHROMIUM_FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'];
/** A Slack-like webhook path: the ids stay on screen, the token does not. */
const HOOK_PATH = '/services/T0AB12CD3/aB3dE5fG7hJ9kL1mN3pQ5rS7';

describe('subscriptions and late schedules in the dashboard', () => {
  let browser: Browser;
  let page: Page;
  let receiver: Server;
  let hookUrl = '';
  /** The event ids of the requests the receiver got, in order; it refuses the first (503) and takes the rest. */
  const received: string[] = [];

  const shot = (name: string) => page.screenshot({ path: `${SCREENSHOTS}/${name}.png`, fullPage: true });

  beforeAll(async () => {
    if (!existsSync(`${ROOT}dist/ui/index.html`)) await build({ configFile: `${ROOT}apps/ui/vite.config.ts`, logLevel: 'warn' });
    mkdirSync(SCREENSHOTS, { recursive: true });
    receiver = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        received.push(String(req.headers['idempotency-key']));
        res.statusCode = received.length === 1 ? 503 : 200;
        res.end('{}');
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}${HOOK_PATH}`;
  }, 120_000);

  const { t, kairos, client } = useKairos({ roles: ['api', 'scheduler'], env: { KAIROS_HTTP_ALLOWLIST: '127.0.0.1' } });

  beforeAll(async () => {
    // A live worker of the echo handler, so schedules may name it.
    await t.db.query(`INSERT INTO workers (id, queue, handlers, version, started_at, last_seen_at) VALUES ('host:1:default', 'default', '{echo}', '1.0.0', now(), now())`);
    browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: CHROMIUM_FLAGS });
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    receiver?.closeAllConnections();
    await new Promise<void>((resolve) => (receiver ? receiver.close(() => resolve()) : resolve()));
  });

  const deliveries = async (id: string): Promise<{ eventId: string; state: string; attempts: unknown[] }[]> => (await client.get(`/v1/subscriptions/${id}/deliveries`)).body.items;

  it('lists a subscription without its token, and its page shows a test ping delivered with one bar per attempt', async () => {
    const created = await client.post('/v1/subscriptions', {
      url: hookUrl,
      events: ['run.dead', 'schedule.late'],
      filter: { labels: { team: 'billing' } },
      description: 'billing on-call',
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const subscription = created.body as { id: string };
    const test = await client.post(`/v1/subscriptions/${subscription.id}/test`);
    expect(test.status, JSON.stringify(test.body)).toBe(202);
    const { eventId } = test.body as { eventId: string };
    // Refused once, then taken on the retry a second later.
    await waitFor(async () => ((await deliveries(subscription.id)).find((d) => d.eventId === eventId && d.state === 'delivered') ? true : undefined), 'the ping delivered', 30_000);
    expect(received).toEqual([eventId, eventId]);

    await page.goto(`${kairos.url}/ui`);
    await page.getByRole('link', { name: 'Subscriptions' }).click();
    const row = page.getByTestId(`subscription-row-${subscription.id}`);
    await row.waitFor();
    expect(new URL(page.url()).pathname).toBe('/ui/subscriptions');
    const host = new URL(hookUrl).host;
    const text = (await row.textContent())!;
    expect(text).toContain(`${host}/services/T0AB12CD3/…`);
    expect(text).not.toContain('aB3dE5fG7hJ9kL1mN3pQ5rS7');
    expect(text).toContain('billing on-call');
    expect(text).toContain('run.dead');
    expect(text).toContain('schedule.late');
    expect(text).toContain('only labels team:billing');
    expect(text).toContain('json');
    expect(await row.locator('.badge').textContent()).toBe('active');
    await shot('subscriptions');

    await row.getByRole('link', { name: `${host}/services/T0AB12CD3/…` }).click();
    await page.getByRole('heading', { name: `${host}/services/T0AB12CD3/…` }).waitFor();
    expect(new URL(page.url()).pathname).toBe(`/ui/subscriptions/${subscription.id}`);
    const table = page.getByTestId('deliveries');
    await table.waitFor();
    const delivered = table.locator('tbody tr');
    expect(await delivered.count()).toBe(1);
    expect(await delivered.getAttribute('data-state')).toBe('delivered');
    expect(await delivered.locator('.badge').textContent()).toBe('delivered');
    expect(await delivered.locator('code').textContent()).toBe('ping');
    expect(await delivered.getByTestId('delivery-attempt-count').textContent()).toBe('2');
    expect(await delivered.textContent()).toMatch(/200 in \d+ ms/);
    const deliveryId = (await delivered.getAttribute('data-delivery-id'))!;

    // One bar per attempt, oldest left: the refused one, then the one taken.
    const chart = page.getByTestId('delivery-attempts');
    const marks = chart.locator('[data-testid^="delivery-attempt-"]');
    expect(await marks.count()).toBe(2);
    const first = page.getByTestId(`delivery-attempt-${deliveryId}-1`);
    const second = page.getByTestId(`delivery-attempt-${deliveryId}-2`);
    expect(await first.getAttribute('data-outcome')).toBe('refused');
    expect(await second.getAttribute('data-outcome')).toBe('taken');
    expect((await first.boundingBox())!.x).toBeLessThan((await second.boundingBox())!.x);
    expect(await first.locator('title').textContent()).toMatch(/ · ping, attempt 1 · 503 in \d+ ms: /);
    await shot('subscription');

    // A second ping from the page's button: another delivery, taken at once, and its bar.
    await page.getByRole('button', { name: 'Send test' }).click();
    await page.getByText('Test sent').waitFor();
    await expect.poll(() => table.locator('tbody tr[data-state="delivered"]').count(), { timeout: 20_000 }).toBe(2);
    expect(await marks.count()).toBe(3);
    expect(received).toHaveLength(3);

    await page.getByRole('button', { name: 'Pause' }).click();
    await page.locator('.lead .badge-paused').waitFor();
    expect(await page.getByRole('button', { name: 'Send test' }).count()).toBe(0);
    await page.getByRole('button', { name: 'Resume' }).click();
    await page.locator('.lead .badge-active').waitFor();
    expect((await client.get(`/v1/subscriptions/${subscription.id}`)).body.state).toBe('active');
  });

  it('marks a late schedule in the list and on its page, which tells its deadline', async () => {
    const definition = { cron: '0 0 1 1 *', timezone: 'UTC', target: { type: 'handler', name: 'echo' } };
    const late = await client.post('/v1/schedules', { ...definition, name: 'nightly-report', expect: { succeededWithin: '10m' } });
    expect(late.status, JSON.stringify(late.body)).toBe(201);
    const onTime = await client.post('/v1/schedules', { ...definition, name: 'weekly-digest' });
    expect(onTime.status, JSON.stringify(onTime.body)).toBe(201);
    await t.db.query(`UPDATE schedules SET late_since = '2026-05-01T10:00:00Z' WHERE id = $1`, [late.body.id]);

    await page.goto(`${kairos.url}/ui/schedules`);
    const lateRow = page.locator('tr', { has: page.getByRole('link', { name: 'nightly-report' }) });
    await lateRow.waitFor();
    expect(await lateRow.getByTestId('late-badge').textContent()).toContain('late since 2026-05-01 10:00:00Z');
    const onTimeRow = page.locator('tr', { has: page.getByRole('link', { name: 'weekly-digest' }) });
    expect(await onTimeRow.getByTestId('late-badge').count()).toBe(0);
    await shot('late-schedules');

    await lateRow.getByRole('link', { name: 'nightly-report' }).click();
    await page.getByRole('heading', { name: 'nightly-report' }).waitFor();
    const badge = page.locator('.lead').getByTestId('late-badge');
    expect(await badge.getAttribute('title')).toBe("The run of the 2026-05-01 10:00:00Z slot did not succeed within 10 minutes, and no slot's run has since.");
    expect(await page.locator('section[aria-labelledby=definition]').textContent()).toContain("Deadlineeach slot's run succeeds within 10 minutes of the slot");
    await shot('late-schedule');

    await page.goto(`${kairos.url}/ui/schedules/${onTime.body.id}`);
    await page.getByRole('heading', { name: 'weekly-digest' }).waitFor();
    expect(await page.locator('.lead').getByTestId('late-badge').count()).toBe(0);
    expect(await page.locator('section[aria-labelledby=definition]').textContent()).toContain('Deadlinenothing: no deadline is watched');
  });
});
