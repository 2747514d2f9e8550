/**
 * The dashboard's run page, live: in a real headless Chromium, a handler on an SDK worker of this
 * process reports progress ({ done, total }) and is held between reports by the test. The run page,
 * opened once, shows the bar and its count, then the next count, then the run succeeded, each
 * without a reload (GET /v1/runs/:id/stream); a progress that is not a count shows as its JSON.
 * Each page is saved as a screenshot under test-results/ui/.
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

/** A gate the test opens: the handler waits at it between reports. */
function gate(): { opened: Promise<void>; open: () => void } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

describe('the run page, live', () => {
  let browser: Browser;
  let page: Page;
  let worker: KairosWorker;
  const gates = [gate(), gate()];

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
    const env = t.env();
    worker = new KairosWorker({
      databaseUrl: env.DATABASE_URL!,
      redisUrl: env.REDIS_URL || null,
      queuePrefix: env.KAIROS_QUEUE_PREFIX!,
      queue: 'live',
      concurrency: 2,
      handlers: {
        'import-rows': async (ctx) => {
          await ctx.progress({ done: 1, total: 4 });
          await gates[0]!.opened;
          await ctx.progress({ done: 3, total: 4 });
          await gates[1]!.opened;
          await ctx.progress({ done: 4, total: 4 });
          return { imported: 4 };
        },
        'warm-up': async (ctx) => {
          await ctx.progress({ stage: 'warming up' });
          return 'warm';
        },
      },
      logger: { log: () => undefined, warn: () => undefined, error: () => undefined },
    });
    await worker.start();
    browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: CHROMIUM_FLAGS });
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  }, 120_000);

  afterAll(async () => {
    for (const g of gates) g.open();
    await browser?.close();
    await worker?.stop();
  });

  it('shows the progress and the state change without a reload', async () => {
    const created = await client.post('/v1/runs', { target: { type: 'handler', name: 'import-rows', queue: 'live' } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const runId = created.body.id as string;
    await expect.poll(async () => (await client.get(`/v1/runs/${runId}`)).body.progress, { timeout: 20_000 }).toEqual({ done: 1, total: 4 });

    await page.goto(`${kairos.url}/ui/runs/${runId}`);
    // Marks this document: a reload would lose it.
    await page.evaluate(() => ((globalThis as unknown as { sameDocument: boolean }).sameDocument = true));
    const label = page.getByTestId('run-progress-label');
    await expect.poll(() => label.textContent(), { timeout: 10_000 }).toBe('1 of 4 (25%)');
    expect(await page.getByRole('progressbar', { name: 'Progress' }).getAttribute('value')).toBe('0.25');
    expect(await page.locator('.lead .badge').first().textContent()).toBe('running');
    await shot('run-live-progress');

    gates[0]!.open();
    await expect.poll(() => label.textContent(), { timeout: 10_000 }).toBe('3 of 4 (75%)');

    gates[1]!.open();
    await runInState(client, runId, 'succeeded');
    await expect.poll(() => page.locator('.lead .badge').first().textContent(), { timeout: 10_000 }).toBe('succeeded');
    await expect.poll(() => label.textContent(), { timeout: 10_000 }).toBe('4 of 4 (100%)');
    await expect.poll(() => page.locator('pre').last().textContent(), { timeout: 10_000 }).toContain('"imported": 4');
    expect(await page.evaluate(() => (globalThis as unknown as { sameDocument?: boolean }).sameDocument)).toBe(true);
    await shot('run-live-succeeded');
  }, 60_000);

  it('shows a progress that is not a count as its JSON', async () => {
    const created = await client.post('/v1/runs', { target: { type: 'handler', name: 'warm-up', queue: 'live' } });
    const runId = created.body.id as string;
    await runInState(client, runId, 'succeeded');
    await page.goto(`${kairos.url}/ui/runs/${runId}`);
    const json = page.getByTestId('run-progress-json');
    await json.waitFor();
    expect(JSON.parse((await json.textContent())!)).toEqual({ stage: 'warming up' });
  }, 30_000);
});
