/**
 * The dashboard's overview and a schedule's run charts in a real headless Chromium, against the API
 * alone and a ledger seeded with known runs: without runs the overview says what to do next; with
 * them it draws the last 24 hours by the hour (one stacked bar per hour with runs, a segment per
 * outcome, a point per hour on the failure-rate, p95 duration and p95 lateness lines) and a bar per
 * queue with what waits on it; a schedule's page draws a mark per run for its duration and its
 * lateness, and tells its target in words, as the run page does. Each page is saved as a
 * screenshot under test-results/ui/.
 */
import { existsSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromium, type Browser, type Page } from 'playwright-core';
import { build } from 'vite';
import { newId } from '@kairos/domain';
import { useKairos } from '../support/kairos.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SCREENSHOTS = `${ROOT}test-results/ui`;
const CHROMIUM_FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'];
const MIN = 60_000;
const HOUR = 3_600_000;

/** The newest modification under `dir`, ms. */
function newest(dir: string): number {
  return Math.max(...readdirSync(dir, { withFileTypes: true }).map((e) => (e.isDirectory() ? newest(join(dir, e.name)) : statSync(join(dir, e.name)).mtimeMs)));
}

describe('the overview and the run charts in the dashboard', () => {
  let browser: Browser;
  let page: Page;

  const shot = (name: string) => page.screenshot({ path: `${SCREENSHOTS}/${name}.png`, fullPage: true });

  beforeAll(async () => {
    const index = `${ROOT}dist/ui/index.html`;
    if (!existsSync(index) || statSync(index).mtimeMs < newest(`${ROOT}apps/ui/src`)) await build({ configFile: `${ROOT}apps/ui/vite.config.ts`, logLevel: 'warn' });
    mkdirSync(SCREENSHOTS, { recursive: true });
  }, 120_000);

  const { t, kairos, client } = useKairos({ roles: ['api'] });
  let namespaceId = '';

  beforeAll(async () => {
    namespaceId = (await t.db.query(`SELECT id FROM namespaces WHERE name = 'default'`)).rows[0].id;
    browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: CHROMIUM_FLAGS });
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
  });

  /** An ended run (or a queued one, without times), inserted as the ledger would hold it. */
  const insert = async (run: { state: string; scheduledFor: number; startedAt: number | null; finishedAt: number | null; scheduleId?: string; target?: object }) => {
    const id = newId(run.scheduledFor);
    const queued = run.state === 'queued';
    await t.db.query(
      `INSERT INTO runs (id, namespace_id, schedule_id, origin, scheduled_for, available_at, state, max_attempts, target, retry, timeout_ms, reason_code, started_at, finished_at)
       VALUES ($1, $2, $3, 'schedule', $4, $4, $5, 3, $6, $10, 60000, $7, $8, $9)`,
      [
        id,
        namespaceId,
        run.scheduleId ?? null,
        new Date(run.scheduledFor),
        run.state,
        JSON.stringify(run.target ?? { type: 'handler', name: 'echo' }),
        queued ? null : run.state.toUpperCase(),
        run.startedAt === null ? null : new Date(run.startedAt),
        run.finishedAt === null ? null : new Date(run.finishedAt),
        JSON.stringify({ maxAttempts: 3, backoff: { type: 'exponential', baseMs: 60_000, maxMs: 3_600_000, jitter: 0.1 } }),
      ],
    );
    return id;
  };
  /** Ended at `endMs`, after running `durationMs` from `latenessMs` past its slot. */
  const ended = (state: string, endMs: number, durationMs: number, latenessMs: number, more: { scheduleId?: string; target?: object } = {}) =>
    insert({ state, scheduledFor: endMs - durationMs - latenessMs, startedAt: endMs - durationMs, finishedAt: endMs, ...more });

  it('says what to do next while no run has ended', async () => {
    await page.goto(`${kairos.url}/ui`);
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
    expect(await page.getByTestId('overview-empty').textContent()).toContain('No run ended in the last 24 hours. Create a schedule');
    expect(await page.locator('section[aria-labelledby=queue-depth] .empty').textContent()).toContain('Start a worker');
    // The schedules list stays one click away.
    await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Schedules' }).click();
    await page.getByRole('heading', { name: 'Schedules' }).waitFor();
    expect(new URL(page.url()).pathname).toBe('/ui/schedules');
    await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Overview' }).click();
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
    await shot('overview-empty');
  });

  it('draws the last 24 hours by the hour, and what waits on each queue', async () => {
    const hour = Math.floor(Date.now() / HOUR) * HOUR;
    // Two hours ago: three successes (1, 2 and 3 s) and a failure; five hours ago: two successes and
    // a dead run; ten hours ago: a run cancelled before it started.
    await ended('succeeded', hour - 2 * HOUR + 10 * MIN, 1_000, 0);
    await ended('succeeded', hour - 2 * HOUR + 20 * MIN, 2_000, 100);
    await ended('succeeded', hour - 2 * HOUR + 30 * MIN, 3_000, 200);
    await ended('failed', hour - 2 * HOUR + 40 * MIN, 4_000, 300);
    await ended('succeeded', hour - 5 * HOUR + 10 * MIN, 500, 0);
    await ended('succeeded', hour - 5 * HOUR + 20 * MIN, 500, 0);
    await ended('dead', hour - 5 * HOUR + 30 * MIN, 30_000, 5_000);
    await insert({ state: 'cancelled', scheduledFor: hour - 10 * HOUR, startedAt: null, finishedAt: hour - 10 * HOUR + 5 * MIN });
    // Live workers of two queues; three runs due and waiting on media.
    await t.db.query(
      `INSERT INTO workers (id, queue, handlers, version, started_at, last_seen_at) VALUES
         ('host:1:default', 'default', '{echo}', '1.0.0', now(), now()), ('host:1:media', 'media', '{thumb}', '1.0.0', now(), now())`,
    );
    for (let i = 0; i < 3; i++) await insert({ state: 'queued', scheduledFor: Date.now() - MIN, startedAt: null, finishedAt: null, target: { type: 'handler', name: 'thumb', queue: 'media' } });

    await page.goto(`${kairos.url}/ui`);
    const bars = page.getByTestId('outcome-bars');
    await bars.waitFor();
    expect(await page.getByTestId('runs-summary').textContent()).toBe('8 runs ended, 2 failed or dead (25%).');
    expect(await bars.locator('.outcome-bar').count()).toBe(3);
    expect(await bars.locator('rect.bar-segment').count()).toBe(5);
    expect(await bars.locator('rect[data-outcome=dead]').count()).toBe(1);
    expect(await bars.locator('.outcome-bar title').allTextContents()).toEqual(
      // An hour is named by its time, the one at midnight by its date (the time axis's labels).
      expect.arrayContaining([expect.stringMatching(/^(\d\d:00|[A-Z][a-z]{2} \d{1,2}): 3 succeeded, 1 failed$/), expect.stringMatching(/^(\d\d:00|[A-Z][a-z]{2} \d{1,2}): 2 succeeded, 1 dead$/), expect.stringMatching(/: 1 cancelled$/)]),
    );
    // A point per hour with runs; the cancelled run never started, so its hour has no duration.
    expect(await page.getByTestId('failure-rate-line').locator('circle.chart-point').count()).toBe(3);
    expect(await page.getByTestId('failure-rate-line').locator('circle.chart-point title').allTextContents()).toEqual(
      expect.arrayContaining([expect.stringMatching(/: 25%$/), expect.stringMatching(/: 33.3%$/), expect.stringMatching(/: 0%$/)]),
    );
    expect(await page.getByTestId('duration-line').locator('circle.chart-point').count()).toBe(2);
    // Durations 1, 2, 3 and 4 s: p95 at rank 2.85, 3.85 s.
    expect(await page.getByTestId('duration-line').locator('circle.chart-point title').allTextContents()).toEqual(expect.arrayContaining([expect.stringMatching(/: 3\.8 s$/)]));
    expect(await page.getByTestId('lateness-line').locator('circle.chart-point').count()).toBe(2);

    const depth = page.getByTestId('queue-depth');
    expect(await depth.locator('.queue-bar').count()).toBe(2);
    expect(await depth.locator('.queue-bar[data-queue=media] title').textContent()).toBe('media: 3 queued, 0 held, 0 running');
    expect(await depth.locator('.queue-bar[data-queue=media]').textContent()).toContain('3 queued');
    await shot('overview');
  });

  it("charts a schedule's runs, one mark per run, and tells its target in words", async () => {
    const created = await client.post('/v1/schedules', { name: 'nightly-export', cron: '0 3 1 1 *', timezone: 'UTC', target: { type: 'handler', name: 'thumb', queue: 'media' } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const scheduleId = created.body.id as string;
    const base = Date.now() - 6 * HOUR;
    const target = { type: 'handler', name: 'thumb', queue: 'media' };
    await ended('succeeded', base + 10 * MIN, 2_000, 0, { scheduleId, target });
    await ended('succeeded', base + 70 * MIN, 3_000, 1_000, { scheduleId, target });
    await ended('failed', base + 130 * MIN, 1_000, 0, { scheduleId, target });
    const dead = await ended('dead', base + 190 * MIN, 4_000, 2_000, { scheduleId, target });
    await insert({ state: 'cancelled', scheduledFor: base + 250 * MIN, startedAt: null, finishedAt: base + 251 * MIN, scheduleId, target });

    await page.goto(`${kairos.url}/ui/schedules/${scheduleId}`);
    const durations = page.getByTestId('run-durations');
    await durations.waitFor();
    expect(await durations.locator('circle.run-mark').count()).toBe(5);
    expect(await page.getByTestId('run-lateness').locator('circle.run-mark').count()).toBe(5);
    expect(await durations.locator(`circle[data-run-id="${dead}"]`).getAttribute('data-state')).toBe('dead');
    expect(await durations.locator(`circle[data-run-id="${dead}"] title`).textContent()).toBe('dead, took 4.0 s, started 2.0 s after its slot');
    expect(await durations.locator('circle.outcome-succeeded').count()).toBe(2);
    expect(await page.locator('tr[data-run-id]').count()).toBe(5);
    expect(await page.locator('section[aria-labelledby=definition]').textContent()).toContain('Targethandler thumb on queue media');
    await shot('schedule-run-charts');

    await page.goto(`${kairos.url}/ui/runs/${dead}`);
    await page.getByText('handler thumb on queue media').first().waitFor();
  });
});
