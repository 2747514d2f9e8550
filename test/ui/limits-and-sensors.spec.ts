/**
 * The dashboard's queue limits and sensors in a real headless Chromium, against the API alone (no
 * scheduler, so nothing moves but what the test does): the cluster page lists a queue with its
 * limit after PUT /v1/queues/q1; a held run tells which limit holds it; the sensors page lists a
 * sensor made through REST, and its page draws one bar per evaluation (ticks written with SQL, so
 * the picture is known), lists the ticks with their runs, and pauses and resumes it; a run a
 * sensor asked for links back to it. The cluster page lists the versions in flight, and a run held
 * for its version says so and moves to another from its page. Runs made with a priority and a
 * fairness key show both on their page and in the runs list, a schedule and a sensor show their
 * declarations, and the cluster page draws a queue's queued runs by priority and by fairness key.
 * Each page is saved as a screenshot under test-results/ui/.
 */
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromium, type Browser, type Page } from 'playwright-core';
import { build } from 'vite';
import { useKairos } from '../support/kairos.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SCREENSHOTS = `${ROOT}test-results/ui`;
const CHROMIUM_FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'];

describe('queue limits and sensors in the dashboard', () => {
  let browser: Browser;
  let page: Page;

  const shot = (name: string) => page.screenshot({ path: `${SCREENSHOTS}/${name}.png`, fullPage: true });

  beforeAll(async () => {
    if (!existsSync(`${ROOT}dist/ui/index.html`)) await build({ configFile: `${ROOT}apps/ui/vite.config.ts`, logLevel: 'warn' });
    mkdirSync(SCREENSHOTS, { recursive: true });
  }, 120_000);

  const { t, kairos, client } = useKairos({ roles: ['api'] });

  beforeAll(async () => {
    // Workers of q1 (a live one makes its handler acceptable) and of the sensor's evaluation handler.
    await t.db.query(
      `INSERT INTO workers (id, queue, handlers, version, started_at, last_seen_at) VALUES
         ('host:1:q1', 'q1', '{work}', '1.0.0', now(), now()),
         ('host:2:sensing', 'sensing', '{find-invoices,import-invoice}', '1.0.0', now(), now())`,
    );
    browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: CHROMIUM_FLAGS });
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
  });

  const createRun = async (): Promise<string> => {
    const created = await client.post('/v1/runs', { target: { type: 'handler', name: 'work', queue: 'q1' } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    return created.body.id as string;
  };

  it('lists a queue with its limit, running against it, and a held run tells which limit holds it', async () => {
    expect((await client.put('/v1/queues/q1', { maxRunning: 2, rate: { max: 100, per: '1m' } })).status).toBe(200);
    const [running, held] = [await createRun(), await createRun()];
    await t.db.query(`UPDATE runs SET state = 'running', lease_owner = 'ui-test', lease_expires_at = now() + interval '1 hour', started_at = now() WHERE id = $1`, [running]);
    await t.db.query(`UPDATE runs SET held_at = now(), defer_reason = 'QUEUE_LIMIT', enqueued_at = NULL WHERE id = $1`, [held]);

    await page.goto(`${kairos.url}/ui/cluster`);
    const row = page.getByTestId('queue-q1');
    await row.waitFor();
    const cells = await row.locator('td').allTextContents();
    // One running, none queued (the other is held), one held.
    expect(cells.map((c) => c.trim())).toEqual(['q1', '1/2', '0', '1', '100 per 1m', '1']);
    expect(await row.getByRole('img').getAttribute('aria-label')).toBe('1 of at most 2 running');
    expect(await page.getByTestId('queues').locator('tbody tr').count()).toBeGreaterThanOrEqual(1);
    await shot('queues');

    await page.goto(`${kairos.url}/ui/runs/${held}`);
    const note = page.getByTestId('held-note');
    await note.waitFor();
    await expect.poll(() => note.textContent()).toContain('at most 2 of its runs run at once (1 running now, 1 held)');
    expect(await note.textContent()).toMatch(/^Held back · QUEUE_LIMIT Held back by the limit of queue "q1"/);
    await shot('held-run');
  });

  it('lists the versions in flight, and a run waiting for its version says so and moves to another', async () => {
    const waiting = await createRun();
    await t.db.query(`UPDATE runs SET version = '0.9.0', held_at = now(), defer_reason = 'VERSION_UNAVAILABLE', enqueued_at = NULL WHERE id = $1`, [waiting]);

    await page.goto(`${kairos.url}/ui/cluster`);
    const old = page.getByTestId('version-q1-0.9.0');
    await old.waitFor();
    expect((await old.locator('td').allTextContents()).map((c) => c.trim())).toEqual(['q1', '0.9.0', '0', '1', '1', '1 active run needs it, 1 waiting for a worker']);
    expect((await page.getByTestId('version-q1-1.0.0').locator('td').allTextContents()).map((c) => c.trim())).toEqual(['q1', '1.0.0', '1', '0', '0', 'no active runs: its workers may be stopped']);
    await shot('versions');

    await page.goto(`${kairos.url}/ui/runs/${waiting}`);
    const note = page.getByTestId('version-wait');
    await note.waitFor();
    expect(await note.textContent()).toMatch(/^Waiting for its version · VERSION_UNAVAILABLE It stored a checkpoint under version "0.9.0", and no live worker of queue "q1" runs that version\./);
    expect(await page.getByTestId('run-version').textContent()).toBe('0.9.0');
    await shot('version-wait');
    await page.getByLabel('Version', { exact: true }).fill('1.0.0');
    await page.getByRole('button', { name: 'Move', exact: true }).click();
    await expect.poll(() => page.getByTestId('run-version').textContent()).toBe('1.0.0');
    expect(await note.count()).toBe(0);
    expect((await t.db.query(`SELECT version, held_at FROM runs WHERE id = $1`, [waiting])).rows[0]).toEqual({ version: '1.0.0', held_at: null });
    await shot('version-moved');
  });

  it("shows a run's priority and fairness key, a schedule's declaration, and a queue's queued runs by priority and key", async () => {
    // A worker known to the ledger (its handler is acceptable) but none running, and an API without a scheduler: the runs stay queued.
    await t.db.query(`INSERT INTO workers (id, queue, handlers, version, started_at, last_seen_at) VALUES ('host:3:fair', 'fair', '{work}', '1.0.0', now(), now())`);
    const post = async (priority: number, tenant: string | null) => {
      const created = await client.post('/v1/runs', {
        target: { type: 'handler', name: 'work', queue: 'fair' },
        priority,
        ...(tenant === null ? {} : { fairness: { key: 'tenant-{{payload.t}}', weight: 2 }, payload: { t: tenant } }),
      });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      return created.body as { id: string; priority: number; fairnessKey: string | null; deferReason: string | null };
    };
    const first = await post(1, 'a');
    expect(first).toMatchObject({ priority: 1, fairnessKey: 'tenant-a' });
    const second = await post(1, 'a');
    await post(5, 'b');
    const plain = await post(3, null);
    expect(plain).toMatchObject({ priority: 3, fairnessKey: null });

    await page.goto(`${kairos.url}/ui/runs/${first.id}`);
    const priority = page.getByTestId('run-priority');
    await priority.waitFor();
    expect(await priority.textContent()).toBe('priority 1 (first)');
    expect(await page.getByTestId('run-fairness-key').textContent()).toBe('tenant-a');
    await shot('run-priority');
    // A run waiting for its key's turn (as the ledger's backlog keeps it) says so, with how many runs of its key are queued.
    await t.db.query(`UPDATE runs SET held_at = now(), defer_reason = 'FAIR_SHARE', enqueued_at = NULL WHERE id = $1`, [second.id]);
    await page.goto(`${kairos.url}/ui/runs/${second.id}`);
    const note = page.getByTestId('held-note');
    await note.waitFor();
    await expect.poll(() => note.textContent()).toContain('(2 runs of the key queued now)');
    expect(await note.textContent()).toMatch(
      /^Waiting for its turn · FAIR_SHARE Waiting for the turn of its fairness key "tenant-a" on queue "fair" \(2 runs of the key queued now\): among the due runs of priority 1 \(first\)/,
    );
    await shot('run-fair-share');
    await page.goto(`${kairos.url}/ui/runs/${plain.id}`);
    await expect.poll(() => page.getByTestId('run-priority').textContent()).toBe('priority 3 (normal)');
    expect(await page.getByTestId('run-fairness-key').textContent()).toMatch(/^none/);

    // The runs list marks a priority other than the normal one.
    await page.goto(`${kairos.url}/ui/runs`);
    const firstRow = page.locator(`tr[data-run-id="${first.id}"]`);
    await firstRow.waitFor();
    expect(await firstRow.getByTestId('priority-badge').getAttribute('title')).toBe('priority 1 (first)');
    expect(await page.locator(`tr[data-run-id="${plain.id}"]`).getByTestId('priority-badge').count()).toBe(0);

    // A schedule's declaration, beside its concurrency.
    const schedule = await client.post('/v1/schedules', {
      name: 'fair-nightly',
      every: '1h',
      target: { type: 'handler', name: 'work', queue: 'fair' },
      payload: { t: 'c' },
      priority: 4,
      fairness: { key: 'tenant-{{payload.t}}', weight: 5 },
      paused: true,
    });
    expect(schedule.status, JSON.stringify(schedule.body)).toBe(201);
    await page.goto(`${kairos.url}/ui/schedules/${schedule.body.id as string}`);
    const definition = page.locator('section[aria-labelledby=definition]');
    await definition.waitFor();
    expect(await definition.textContent()).toContain('Prioritypriority 4 (after normal)');
    expect(await definition.textContent()).toContain('Fairnesskey tenant-{{payload.t}}, weight 5');

    // The cluster page draws the queue's queued runs by priority, 1 at the left, and by fairness key, most first.
    await page.goto(`${kairos.url}/ui/cluster`);
    const shares = page.getByTestId('queued-shares-fair');
    await shares.waitFor();
    const queue = (await client.get('/v1/queues/fair')).body as { queuedByPriority: { priority: number; queued: number }[]; fairnessKeys: { key: string; queued: number }[] };
    const segments = shares.locator('.priority-segment');
    const drawn = await segments.evaluateAll((gs) => gs.map((g) => [Number(g.getAttribute('data-priority')), Number(g.getAttribute('data-queued'))]));
    expect(drawn).toEqual(queue.queuedByPriority.filter((p) => p.queued > 0).map((p) => [p.priority, p.queued]));
    expect(drawn[0]).toEqual([1, 2]);
    const xs: number[] = [];
    for (let i = 0; i < drawn.length; i++) xs.push((await segments.nth(i).boundingBox())!.x);
    expect(xs).toEqual([...xs].sort((a, b) => a - b));
    expect(await segments.first().getAttribute('aria-label')).toBe('priority 1 (first): 2 queued');
    const keys = await shares.locator('.fairness-key').evaluateAll((gs) => gs.map((g) => [g.getAttribute('data-key'), Number(g.getAttribute('data-queued'))]));
    expect(keys.slice(0, 2)).toEqual([
      ['tenant-a', 2],
      ['tenant-b', 1],
    ]);
    expect(keys).toEqual(queue.fairnessKeys.map((k) => [k.key, k.queued]));
    // A queue without queued runs draws nothing.
    const queues = (await client.get('/v1/queues')).body.items as { name: string; queuedByPriority: { queued: number }[] }[];
    const withQueued = queues.filter((q) => q.queuedByPriority.some((p) => p.queued > 0)).map((q) => `queued-shares-${q.name}`);
    expect(await page.locator('[data-testid^="queued-shares-"]').evaluateAll((figures) => figures.map((f) => f.getAttribute('data-testid')))).toEqual(withQueued);
    await shot('queued-by-priority');
  });

  it('lists a sensor made through REST, and draws one bar per evaluation on its page', async () => {
    const created = await client.post('/v1/sensors', {
      name: 'new-invoices',
      every: '30s',
      target: { type: 'handler', name: 'find-invoices', queue: 'sensing' },
      run: {
        target: { type: 'handler', name: 'import-invoice', queue: 'sensing' },
        concurrency: { key: 'customer-{{payload.customer}}', limit: 1 },
        priority: 2,
        fairness: { key: 'customer-{{payload.customer}}', weight: 3 },
      },
      paused: true,
      labels: { team: 'billing' },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const sensor = created.body as { id: string };
    await t.db.query(`UPDATE sensors SET cursor = '{"after": "inv-0042"}', cursor_version = 4 WHERE id = $1`, [sensor.id]);

    // Five evaluations a minute apart, oldest first: what each asked for, created and deduplicated, and how it ended.
    const runIds = [await createRun(), await createRun()];
    const ticks = [
      { state: 'succeeded', requested: 3, created: 2, deduplicated: 1, runIds, reason: null },
      { state: 'succeeded', requested: 0, created: 0, deduplicated: 0, runIds: [], reason: null },
      { state: 'failed', requested: 2, created: 0, deduplicated: 0, runIds: [], reason: 'SENSOR_CURSOR_MOVED' },
      { state: 'skipped', requested: 0, created: 0, deduplicated: 0, runIds: [], reason: null },
      { state: 'evaluating', requested: 0, created: 0, deduplicated: 0, runIds: [], reason: null },
    ].map((tick, i) => ({ ...tick, id: randomUUID(), evaluationRunId: randomUUID(), minutesAgo: 5 - i }));
    for (const tick of ticks) {
      await t.db.query(
        `INSERT INTO sensor_ticks (id, sensor_id, evaluation_run_id, state, cursor_version, requested, created, deduplicated, run_ids, reason_code, reason_text, started_at, finished_at)
         VALUES ($1, $2, $3, $4, 3, $5, $6, $7, $8::uuid[], $9, $10, now() - make_interval(mins => $11), CASE WHEN $4 = 'evaluating' THEN NULL ELSE now() - make_interval(mins => $11) + interval '250 milliseconds' END)`,
        [tick.id, sensor.id, tick.evaluationRunId, tick.state, tick.requested, tick.created, tick.deduplicated, tick.runIds, tick.reason, tick.reason && 'the cursor moved under the evaluation', tick.minutesAgo],
      );
    }

    await page.goto(`${kairos.url}/ui`);
    await page.getByRole('link', { name: 'Sensors' }).click();
    const row = page.getByTestId('sensor-row-new-invoices');
    await row.waitFor();
    const text = await row.textContent();
    expect(text).toContain('every 30 seconds');
    expect(text).toContain('find-invoices');
    expect(text).toContain('paused');
    expect(text).toContain('evaluating');
    await shot('sensors');

    await row.getByRole('link', { name: 'new-invoices' }).click();
    await page.getByRole('heading', { name: 'new-invoices' }).waitFor();
    expect(new URL(page.url()).pathname).toBe(`/ui/sensors/${sensor.id}`);
    const chart = page.getByTestId('sensor-evaluations');
    await chart.waitFor();
    const bars = chart.locator('[data-testid^="sensor-tick-"]');
    expect(await bars.count()).toBe(5);
    // One bar per tick, oldest left.
    const xs: number[] = [];
    for (const tick of ticks) {
      const bar = page.getByTestId(`sensor-tick-${tick.id}`);
      expect(await bar.getAttribute('data-state')).toBe(tick.state);
      xs.push((await bar.boundingBox())!.x);
    }
    expect(xs).toEqual([...xs].sort((a, b) => a - b));
    expect(new Set(xs).size).toBe(5);
    // The tallest bar asked for three: two created, one deduplicated; the failed one committed nothing.
    const first = page.getByTestId(`sensor-tick-${ticks[0]!.id}`);
    expect(await first.locator('title').textContent()).toMatch(/succeeded .* 3 runs asked for: 2 created, 1 deduplicated · took 250 ms$/);
    const height = async (id: string, segment: string) => Number((await page.getByTestId(`sensor-tick-${id}`).locator(`rect.${segment}`).getAttribute('height')) ?? 0);
    expect(await height(ticks[0]!.id, 'tick-created')).toBeCloseTo(2 * (await height(ticks[0]!.id, 'tick-deduplicated')));
    expect(await height(ticks[2]!.id, 'tick-uncommitted')).toBeGreaterThan(0);
    expect(await page.getByTestId(`sensor-tick-${ticks[2]!.id}`).locator('title').textContent()).toContain('SENSOR_CURSOR_MOVED: the cursor moved under the evaluation');
    expect(await page.getByTestId(`sensor-tick-${ticks[4]!.id}`).locator('title').textContent()).toContain('still evaluating');

    const table = page.getByTestId('sensor-ticks');
    expect(await table.locator('tbody tr').count()).toBe(5);
    // Newest first in the table; the first tick's row links its evaluation run and the runs it created.
    const oldest = table.locator(`tr[data-tick-id="${ticks[0]!.id}"]`);
    expect(await oldest.locator('a').evaluateAll((links) => links.map((a) => (a as unknown as { pathname: string }).pathname))).toEqual([
      `/ui/runs/${ticks[0]!.evaluationRunId}`,
      ...runIds.map((id) => `/ui/runs/${id}`),
    ]);
    expect(JSON.parse((await page.getByTestId('sensor-cursor').textContent())!)).toEqual({ after: 'inv-0042' });
    const definition = await page.locator('section[aria-labelledby=definition]').textContent();
    expect(definition).toContain('key customer-{{payload.customer}}, at most 1 at once');
    expect(definition).toContain('Their prioritypriority 2 (before normal)');
    expect(definition).toContain('Their fairnesskey customer-{{payload.customer}}, weight 3');
    await shot('sensor');

    await page.getByRole('button', { name: 'Resume' }).click();
    await page.locator('.lead .badge-active').waitFor();
    await page.getByRole('button', { name: 'Pause' }).click();
    await page.locator('.lead .badge-paused').waitFor();
    expect((await client.get(`/v1/sensors/${sensor.id}`)).body.paused).toBe(true);

    // A run the sensor asked for links back to it, with its run key.
    await t.db.query(`UPDATE runs SET sensor_id = $1, run_key = 'invoice-0042', origin = 'sensor' WHERE id = $2`, [sensor.id, runIds[0]]);
    await oldest.locator('a').nth(1).click();
    await page.getByRole('heading', { name: /^Run / }).waitFor();
    expect(await page.getByTestId('run-key').textContent()).toBe('invoice-0042');
    await page.locator('.lead').getByRole('link', { name: 'its sensor' }).click();
    await page.getByRole('heading', { name: 'new-invoices' }).waitFor();
  });
});
