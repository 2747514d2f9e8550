/**
 * The dashboard in a real headless Chromium against Kairos started in-process with keys required:
 * log in, create a schedule, watch its runs appear live, read a run's story, pause and resume,
 * republish a dead letter, and the first paint of the schedules page with 10,000 schedules. Each
 * page is saved as a screenshot under test-results/ui/.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromium, type Browser, type Page } from 'playwright-core';
import { build } from 'vite';
import { KairosWorker } from '@kairos/sdk';
import { issueKey, useKairos } from '../support/kairos.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SCREENSHOTS = `${ROOT}test-results/ui`;
const CHROMIUM_FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'];

describe('the dashboard in Chromium', () => {
  let browser: Browser;
  let page: Page;
  let key: string;
  let loads = 0;

  const shot = (name: string) => page.screenshot({ path: `${SCREENSHOTS}/${name}.png`, fullPage: true });

  beforeAll(async () => {
    if (!existsSync(`${ROOT}dist/ui/index.html`)) await build({ configFile: `${ROOT}apps/ui/vite.config.ts`, logLevel: 'warn' });
    mkdirSync(SCREENSHOTS, { recursive: true });
  }, 120_000);

  const { t, kairos } = useKairos({ env: { KAIROS_AUTH: 'required' } });

  beforeAll(async () => {
    key = await issueKey(t, 'ui', 'read,write');
    browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: CHROMIUM_FLAGS });
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    page.on('load', () => loads++);
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
  });

  it('serves the page with its security headers, long-cached assets and deep links', async () => {
    const root = await fetch(`${kairos.url}/ui`);
    expect(root.status).toBe(200);
    const csp = root.headers.get('content-security-policy')!;
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain('unsafe-inline');
    expect(csp).toContain("frame-ancestors 'none'");
    expect(root.headers.get('x-content-type-options')).toBe('nosniff');
    const html = await root.text();
    const script = /src="(\/ui\/assets\/[^"]+\.js)"/.exec(html)![1]!;
    const asset = await fetch(`${kairos.url}${script}`);
    expect(asset.status).toBe(200);
    expect(asset.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    for (const deep of ['/ui/schedules/0190e1a0-0000-7000-8000-000000000000', '/ui/runs/x', '/ui/dead-letters', '/ui/cluster']) {
      const response = await fetch(`${kairos.url}${deep}`);
      expect(response.status, deep).toBe(200);
      expect(await response.text()).toBe(html);
    }
    expect((await fetch(`${kairos.url}/ui/assets/missing.js`)).status).toBe(404);
  });

  it('asks for a key, and a wrong one is refused with the reason', async () => {
    await page.goto(`${kairos.url}/ui/schedules`);
    await page.getByLabel('API key').fill('kairos_nope_nope');
    await page.getByRole('button', { name: 'Log in' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toMatch(/unknown|revoked|must be/);
    await shot('login');
    await page.getByLabel('API key').fill(key);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.getByRole('heading', { name: 'Schedules' }).waitFor();
  });

  it('creates a schedule and shows its runs as they happen, without a reload', async () => {
    await page.getByLabel('Name', { exact: true }).last().fill('ui-tour');
    await page.getByLabel('Value').fill('1s');
    await page.getByRole('button', { name: 'Create' }).click();
    await page.getByRole('heading', { name: 'ui-tour' }).waitFor();
    expect(await page.locator('.lead').textContent()).toContain('every second');
    const loadsBefore = loads;
    // A run every second: rows arrive through the subscription while the page stays as it is.
    await expect.poll(() => page.locator('tr[data-run-id]').count(), { timeout: 20_000 }).toBeGreaterThanOrEqual(3);
    await expect.poll(() => page.locator('tr[data-run-id] .badge-succeeded').count(), { timeout: 20_000 }).toBeGreaterThanOrEqual(1);
    expect(loads).toBe(loadsBefore);
    expect(await page.locator('ol.fires li').count()).toBe(10);
    await shot('schedule');
  });

  it('pauses and resumes the schedule', async () => {
    await page.getByRole('button', { name: 'Pause' }).click();
    await page.locator('.lead .badge-paused').waitFor();
    await page.getByRole('button', { name: 'Resume' }).click();
    await page.locator('.lead .badge-active').waitFor();
    const id = new URL(page.url()).pathname.split('/').pop()!;
    const schedule: any = await (await fetch(`${kairos.url}/v1/schedules/${id}`, { headers: { authorization: `Bearer ${key}` } })).json();
    expect(schedule.status).toBe('active');
  });

  it("lists the versions of the schedule's definition, with what each changed", async () => {
    const id = new URL(page.url()).pathname.split('/').pop()!;
    const patched = await fetch(`${kairos.url}/v1/schedules/${id}`, {
      method: 'PATCH',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ jitter: '200ms' }),
    });
    expect(patched.status).toBe(200);
    await page.reload();
    const versions = page.getByRole('region', { name: 'Versions' });
    await versions.getByText('v2').waitFor();
    expect(await versions.locator('li').first().textContent()).toContain('jitter: "0s" → "200ms"');
  });

  it("tells a run's story: events with epochs and actors, attempts, payload and result", async () => {
    await page.locator('tr[data-run-id]:has(.badge-succeeded) a').first().click();
    await page.getByRole('heading', { name: /^Run / }).waitFor();
    await expect.poll(() => page.locator('section[aria-labelledby=story] tbody tr').count()).toBeGreaterThanOrEqual(3);
    const story = await page.locator('section[aria-labelledby=story]').textContent();
    expect(story).toContain('queued → running');
    expect(story).toContain('running → succeeded');
    expect(await page.locator('ol.attempts li').count()).toBe(1);
    await shot('run');
  });

  it("draws a multi-step run's graph, and tells a step's story on a click", async () => {
    const response = await fetch(`${kairos.url}/v1/runs`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        payload: { message: 'the parser broke', retryable: false },
        steps: [
          { name: 'fetch', target: { type: 'handler', name: 'echo' } },
          { name: 'parse', dependsOn: ['fetch'], target: { type: 'handler', name: 'fail' } },
          { name: 'audit', dependsOn: ['fetch'], target: { type: 'handler', name: 'noop' } },
          { name: 'store', dependsOn: ['parse'], target: { type: 'handler', name: 'noop' } },
          { name: 'notify', dependsOn: ['store', 'audit'], when: 'always', target: { type: 'handler', name: 'noop' } },
        ],
      }),
    });
    const run: any = await response.json();
    await expect.poll(async () => ((await (await fetch(`${kairos.url}/v1/runs/${run.id}`, { headers: { authorization: `Bearer ${key}` } })).json()) as any).state, { timeout: 20_000 }).toBe('dead');
    await page.goto(`${kairos.url}/ui/runs/${run.id}`);
    const graph = page.getByTestId('step-graph');
    await graph.waitFor();
    expect(await graph.locator('[data-testid^="step-node-"]').count()).toBe(5);
    // Layered left to right: fetch, then parse and audit, then store, then notify.
    const x = async (name: string) => (await page.getByTestId(`step-node-${name}`).boundingBox())!.x;
    expect(await x('fetch')).toBeLessThan(await x('parse'));
    expect(await x('parse')).toBe(await x('audit'));
    expect(await x('parse')).toBeLessThan(await x('store'));
    expect(await x('store')).toBeLessThan(await x('notify'));
    expect(await page.getByTestId('step-node-store').getAttribute('aria-label')).toMatch(/store, skipped/);
    expect(await page.getByTestId('step-node-notify').getAttribute('aria-label')).toMatch(/notify, succeeded/);
    await page.getByTestId('step-node-parse').click();
    const detail = page.getByTestId('step-detail');
    await expect.poll(() => detail.textContent()).toContain('the parser broke');
    await expect.poll(() => detail.textContent()).toMatch(/HANDLER_NON_RETRYABLE/);
    await expect.poll(() => detail.textContent()).toMatch(/running → dead/);
    await shot('steps');
  });

  it('sends the signal a waiting run asks for from its page, and draws its checkpoints', async () => {
    // A durable function on a worker of this process (the SDK from source), on a queue of its own.
    const env = t.env();
    const worker = new KairosWorker({
      databaseUrl: env.DATABASE_URL!,
      redisUrl: env.REDIS_URL || null,
      queuePrefix: env.KAIROS_QUEUE_PREFIX!,
      queue: 'approvals',
      concurrency: 2,
      handlers: {
        approve: async (ctx) => {
          const draft = await ctx.step('draft', () => ({ amount: 42 }));
          const answer = await ctx.waitForSignal('approval', { timeout: '5m' });
          return { draft, answer };
        },
      },
      logger: { log: () => undefined, warn: () => undefined, error: () => undefined },
    });
    await worker.start();
    try {
      const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
      const created: any = await (await fetch(`${kairos.url}/v1/runs`, { method: 'POST', headers, body: JSON.stringify({ target: { type: 'handler', name: 'approve', queue: 'approvals' } }) })).json();
      const stateOf = async () => ((await (await fetch(`${kairos.url}/v1/runs/${created.id}`, { headers })).json()) as any).state;
      await expect.poll(stateOf, { timeout: 20_000 }).toBe('waiting');
      await page.goto(`${kairos.url}/ui/runs/${created.id}`);
      const form = page.getByTestId('signal-form');
      await form.waitFor();
      expect(await form.getByLabel('Signal name').inputValue()).toBe('approval');
      await form.getByLabel('Body (JSON)').fill('{"approved": true}');
      await form.getByRole('button', { name: 'Send signal' }).click();
      await expect.poll(() => page.getByTestId('signal-status').textContent()).toMatch(/deliver/i);
      await expect.poll(stateOf, { timeout: 20_000 }).toBe('succeeded');
      await page.reload();
      const timeline = page.getByTestId('checkpoints');
      await timeline.waitFor();
      expect(await timeline.getByTestId('checkpoint-draft').textContent()).toMatch(/succeeded/);
      expect(await timeline.getByTestId('checkpoint-signal:approval').textContent()).toMatch(/received/);
      await shot('checkpoints');
    } finally {
      await worker.stop();
    }
  }, 60_000);

  it('republishes a dead letter', async () => {
    const response = await fetch(`${kairos.url}/v1/runs`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ target: { type: 'handler', name: 'fail' }, payload: { message: 'broken on purpose', retryable: false } }),
    });
    const run: any = await response.json();
    await expect.poll(async () => ((await (await fetch(`${kairos.url}/v1/runs/${run.id}`, { headers: { authorization: `Bearer ${key}` } })).json()) as any).state, { timeout: 20_000 }).toBe('dead');
    await page.getByRole('link', { name: 'Dead letters' }).click();
    const card = page.locator(`li[data-run-id="${run.id}"]`);
    await card.waitFor();
    await card.getByRole('button', { name: 'Inspect' }).click();
    expect(await card.locator('pre').textContent()).toContain('broken on purpose');
    await card.getByRole('button', { name: 'Republish' }).click();
    await card.getByRole('status').waitFor();
    expect(await card.getByRole('status').textContent()).toMatch(/Republished as [0-9a-f-]{36}/);
    await shot('dead-letters');
  });

  it('shows the cluster: the leader, schedulers, queue depths', async () => {
    await page.getByRole('link', { name: 'Cluster' }).click();
    await page.getByRole('heading', { name: 'Leader' }).waitFor();
    expect(await page.locator('section[aria-labelledby=leader]').textContent()).toMatch(/epoch \d+/);
    await page.getByRole('heading', { name: 'Workers' }).waitFor();
    await shot('cluster');
  });

  it('fits a narrow window', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    await page.getByRole('link', { name: 'Schedules' }).click();
    await page.locator('table').first().waitFor();
    const overflow = await page.evaluate(() => {
      const root = (globalThis as any).document.documentElement;
      return root.scrollWidth - root.clientWidth;
    });
    expect(overflow).toBeLessThanOrEqual(0);
    await shot('schedules-narrow');
    await page.setViewportSize({ width: 1280, height: 900 });
  });

  it('paints the schedules page in under a second with 10,000 schedules', async () => {
    const created = await fetch(`${kairos.url}/v1/schedules`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'bulk-template', every: '1d', target: { type: 'handler', name: 'noop' }, labels: { team: 'bulk' } }),
    });
    const template: any = await created.json();
    // Straight into Postgres: copies of one schedule under new ids and names, due in a day.
    const c = await t.db.connect();
    await c.query('SET statement_timeout = 45000');
    // Every column but the generated ones (the tick partition), which Postgres computes itself.
    const columns = (
      await c.query(
        `SELECT string_agg(quote_ident(column_name), ', ' ORDER BY ordinal_position) AS list
         FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = 'schedules' AND is_generated = 'NEVER'`,
      )
    ).rows[0].list as string;
    await c.query(
      `INSERT INTO schedules (${columns})
       SELECT ${columns} FROM (
         SELECT copy.* FROM schedules s, generate_series(1, 9999) g,
           LATERAL jsonb_populate_record(NULL::schedules, to_jsonb(s) || jsonb_build_object('id', gen_random_uuid(), 'name', 'bulk-' || g, 'idempotency_key', NULL)) copy
         WHERE s.id = $1) copy`,
      [template.id],
    ).finally(() => c.release());
    expect((await t.db.query(`SELECT count(*)::int AS n FROM schedules WHERE deleted_at IS NULL`)).rows[0].n).toBeGreaterThanOrEqual(10_000);
    // Statistics as a table of this size would have them (autovacuum analyzes it soon after a bulk load).
    await t.db.query('ANALYZE schedules');
    const storageState = await page.context().storageState();
    // Three first visits, each in a new browser context (empty cache); the machine is shared, so the median is what is held to the budget.
    const visits: { firstContentfulPaint: number; largestContentfulPaint: number }[] = [];
    for (let visit = 0; visit < 3; visit++) {
      const fresh = await browser.newPage({ viewport: { width: 1280, height: 900 }, storageState });
      await fresh.goto(`${kairos.url}/ui/schedules`);
      await fresh.locator('tbody tr').nth(49).waitFor({ timeout: 10_000 });
      const paint = await fresh.evaluate(
        () =>
          new Promise<{ firstContentfulPaint: number; largestContentfulPaint: number }>((resolve) => {
            const fcp = performance.getEntriesByName('first-contentful-paint')[0]!.startTime;
            new PerformanceObserver((list) => {
              const entries = list.getEntries();
              resolve({ firstContentfulPaint: fcp, largestContentfulPaint: entries[entries.length - 1]!.startTime });
            }).observe({ type: 'largest-contentful-paint', buffered: true } as unknown as { type: 'mark' });
            setTimeout(() => resolve({ firstContentfulPaint: fcp, largestContentfulPaint: Number.NaN }), 5_000);
          }),
      );
      const resources = await fresh.evaluate(() =>
        performance.getEntriesByType('resource').map((r) => `${new URL(r.name).pathname} ${r.startTime.toFixed(0)}-${(r as unknown as { responseEnd: number }).responseEnd.toFixed(0)} ms`),
      );
      console.log(
        `schedules page with 10,000 schedules, visit ${visit + 1}: first contentful paint ${paint.firstContentfulPaint.toFixed(0)} ms, largest contentful paint (the table) ${paint.largestContentfulPaint.toFixed(0)} ms; ${resources.join(', ')}`,
      );
      if (visit === 0) await fresh.screenshot({ path: `${SCREENSHOTS}/schedules.png`, fullPage: false });
      visits.push(paint);
      await fresh.close();
    }
    const median = (values: number[]) => [...values].sort((a, b) => a - b)[1]!;
    expect(median(visits.map((v) => v.firstContentfulPaint))).toBeLessThan(1_000);
    expect(median(visits.map((v) => v.largestContentfulPaint))).toBeLessThan(1_000);
  });
});
