/**
 * The Runs page's bulk action in a real headless Chromium, against the API alone (no worker, so
 * queued runs stay queued): filtered by queue and state, the dry run shows how many runs match and
 * a sample; "Cancel N runs" asks for a confirmation, and once confirmed the runs are cancelled and
 * the others untouched. The page is saved as a screenshot under test-results/ui/.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromium, type Browser, type Page } from 'playwright-core';
import { build } from 'vite';
import { isUiStale } from '../../scripts/build-state.mjs';
import { useKairos } from '../support/kairos.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SCREENSHOTS = `${ROOT}test-results/ui`;
const CHROMIUM_FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'];

describe('bulk actions on the Runs page', () => {
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    if (!existsSync(`${ROOT}dist/ui/index.html`) || isUiStale(ROOT)) await build({ configFile: `${ROOT}apps/ui/vite.config.ts`, logLevel: 'warn' });
    mkdirSync(SCREENSHOTS, { recursive: true });
  }, 180_000);

  const { t, kairos, client } = useKairos({ roles: ['api'] });

  beforeAll(async () => {
    await t.db.query(
      `INSERT INTO workers (id, queue, handlers, version, started_at, last_seen_at) VALUES ('host:1:default', 'default', '{echo}', '1.0.0', now(), now()), ('host:2:reports', 'reports', '{render}', '1.0.0', now(), now())`,
    );
    browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: CHROMIUM_FLAGS });
    page = await browser.newPage({ viewport: { width: 1280, height: 1000 } });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
  });

  it('filters the runs, shows the dry run count and sample, and cancels them after a confirmation', async () => {
    const availableAt = new Date(Date.now() + 3_600_000).toISOString();
    const reports = (await client.post('/v1/runs/batch', { items: Array.from({ length: 12 }, (_, n) => ({ target: { type: 'handler', name: 'render', queue: 'reports' }, payload: { n }, availableAt })) })).body.items.map(
      (i: any) => i.id as string,
    );
    const others = (await client.post('/v1/runs/batch', { items: [1, 2].map((n) => ({ target: { type: 'handler', name: 'echo' }, payload: { n }, availableAt })) })).body.items.map((i: any) => i.id as string);

    await page.goto(`${kairos.url}/ui`);
    await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Runs' }).click();
    await page.getByRole('heading', { name: 'Runs', level: 1 }).waitFor();
    const search = page.getByRole('search');
    await search.locator('select[name=state]').selectOption('queued');
    await search.getByRole('searchbox', { name: 'Queue' }).fill('reports');
    await search.getByRole('button', { name: 'Filter' }).click();
    // The page shows the reports runs only.
    await page.locator(`tr[data-run-id="${reports[0]}"]`).waitFor();
    expect(await page.locator(`tr[data-run-id="${others[0]}"]`).count()).toBe(0);

    const panel = page.getByRole('region', { name: 'Bulk action' });
    expect(await panel.getByText('Filter:').textContent()).toBe('Filter: state queued, queue reports');
    await panel.getByRole('button', { name: 'Count matching runs' }).click();
    const counted = panel.getByRole('status', { name: 'Matching runs' });
    await counted.getByText('12 runs match; the first 10:').waitFor();
    expect(await counted.getByRole('link').allTextContents()).toEqual(reports.slice().sort().slice(0, 10));
    // Counting changed nothing.
    expect((await client.get(`/v1/runs/${reports[0]}`)).body.state).toBe('queued');

    await counted.getByRole('button', { name: 'Cancel 12 runs' }).click();
    const confirm = panel.getByRole('group', { name: 'Confirm bulk action' });
    await confirm.waitFor();
    await page.screenshot({ path: `${SCREENSHOTS}/runs-bulk-confirm.png`, fullPage: true });
    await confirm.getByRole('button', { name: 'Yes, cancel them' }).click();
    await panel.getByRole('status', { name: 'Bulk result' }).getByText('Cancelled 12 of 12 runs matched.').waitFor();
    // The list, reloaded, has no queued reports run left.
    await page.locator(`tr[data-run-id="${reports[0]}"]`).waitFor({ state: 'detached' });
    await page.screenshot({ path: `${SCREENSHOTS}/runs-bulk.png`, fullPage: true });

    for (const id of reports) expect((await client.get(`/v1/runs/${id}`)).body).toMatchObject({ state: 'cancelled', reasonCode: 'CANCELLED_BY_USER' });
    for (const id of others) expect((await client.get(`/v1/runs/${id}`)).body.state).toBe('queued');

    // With state cancelled, the list shows them so.
    await search.locator('select[name=state]').selectOption('cancelled');
    await search.getByRole('button', { name: 'Filter' }).click();
    await page.locator(`tr[data-run-id="${reports[0]}"]`).locator('.badge-cancelled').waitFor();
  }, 120_000);
});
