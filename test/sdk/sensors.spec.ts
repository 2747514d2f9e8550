/**
 * Sensors end to end, on user workers built from the packed @kairos/sdk and schedulers spawned as
 * processes of their own: a sensor over a directory of files asks for one run per file while 200
 * files appear over 20 s and a worker and the leading scheduler are killed with SIGKILL; every file
 * gets exactly one run, the cursor moves as a chain of committed evaluations, and the replays its
 * look-back makes are recorded as deduplicated. An evaluation whose lease was lost while it ran
 * commits nothing, nor does one during which the cursor was moved.
 */
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { StartedKairos } from '@kairos/process';
import { api, sleep, spawnKairos, startInProcess, useTestEnvironment, waitFor, type KairosChild } from '../support/kairos.js';
import { userProject, userWorkers, type UserProject } from './packed-sdk.js';

const WORKER_SCRIPT = `
import { appendFileSync, existsSync, readdirSync, readFileSync } from 'node:fs';
import { KairosWorker } from '@kairos/sdk';

const worker = new KairosWorker({
  queue: 'files',
  concurrency: 8,
  handlers: {
    // New files after the cursor (at most 25 a time), and the three before it again: a listing may
    // lag, so a sensor looks back, and its run keys make the look-back ask for nothing twice.
    'list-new-files': ({ cursor, payload, sensor }) => {
      const files = readdirSync(payload.dir).sort();
      const after = files.filter((f) => cursor === null || f > cursor).slice(0, 25);
      const before = files.filter((f) => cursor !== null && f <= cursor).slice(-3);
      return { runs: [...before, ...after].map((file) => ({ runKey: file, payload: { file, sensor: sensor.name } })), cursor: after.at(-1) ?? cursor };
    },
    'process-file': ({ payload }) => {
      appendFileSync('processed.log', payload.file + ' ' + process.pid + '\\n');
      return { file: payload.file };
    },
    // Answers what answer.json says once the file release exists; until then it waits.
    controlled: async ({ signal }) => {
      while (!existsSync('release')) {
        if (signal.aborted) throw signal.reason;
        await new Promise((r) => setTimeout(r, 50));
      }
      return JSON.parse(readFileSync('answer.json', 'utf8'));
    },
  },
});
await worker.start();
console.log('ready ' + worker.id);
`;

describe('sensors on user workers', () => {
  const t = useTestEnvironment();
  let api_: StartedKairos;
  let client: ReturnType<typeof api>;
  let project: UserProject;
  const schedulers: KairosChild[] = [];
  const workers = userWorkers(t, () => project, { KAIROS_RUN_LEASE_TTL: '2s', KAIROS_SHUTDOWN_GRACE: '1s' });
  const schedulerEnv = () => t.env({ KAIROS_LEADER_TTL: '1500ms', KAIROS_RUN_LEASE_TTL: '2s', KAIROS_REAPER_SKEW: '300ms' });

  beforeAll(async () => {
    [project, api_] = await Promise.all([userProject({ 'worker.mjs': WORKER_SCRIPT }), startInProcess(t.env(), ['api'])]);
    client = api(api_.url);
  }, 300_000);

  afterEach(async () => {
    await workers.killAll();
    for (const s of schedulers.splice(0)) s.process.kill('SIGKILL');
    await Promise.all([rm(join(project.dir, 'release'), { force: true })]);
  });

  afterAll(async () => {
    await api_?.app.close();
    await project?.remove();
  });

  const files = (name: string) => ({ type: 'handler', name, queue: 'files' });
  const sensorRow = async (id: string) => (await t.db.query(`SELECT cursor, cursor_version::int AS version, evaluation_run_id FROM sensors WHERE id = $1`, [id])).rows[0];
  const ticksOf = async (id: string) =>
    (
      await t.db.query(
        `SELECT state, requested, created, deduplicated, cursor_before, cursor_after, cursor_version::int AS version, reason_code, evaluation_run_id
         FROM sensor_ticks WHERE sensor_id = $1 ORDER BY started_at, id`,
        [id],
      )
    ).rows;
  async function startScheduler(): Promise<KairosChild> {
    const child = spawnKairos('scheduler', schedulerEnv());
    schedulers.push(child);
    await child.ready;
    return child;
  }
  async function leader(): Promise<KairosChild | undefined> {
    const { rows } = await t.db.query(`SELECT holder FROM leases WHERE name = 'scheduler' AND expires_at > now()`);
    const pid = rows[0] ? Number(String(rows[0].holder).split(':')[1]) : null;
    return schedulers.find((s) => s.process.pid === pid && s.process.exitCode === null);
  }

  it('asks for exactly one run per file while 200 files appear over 20 s and a worker and the leader are killed', async () => {
    const dir = join(project.dir, 'inbox');
    await mkdir(dir, { recursive: true });
    await Promise.all([startScheduler(), startScheduler(), workers.start(), workers.start()]);
    const created = await client.post('/v1/sensors', {
      name: 'inbox',
      every: '1s',
      target: files('list-new-files'),
      payload: { dir },
      run: { target: files('process-file'), retry: { maxAttempts: 10, backoff: { type: 'fixed', base: '200ms' } } },
    });
    expect(created.status).toBe(201);
    const id = created.body.id as string;

    const startedAt = Date.now();
    let workerKilled = false;
    let leaderKilled = false;
    for (let i = 0; i < 200; i++) {
      await writeFile(join(dir, `file-${String(i).padStart(3, '0')}.csv`), `row ${i}\n`);
      await sleep(Math.max(0, startedAt + (i + 1) * 100 - Date.now()));
      if (!workerKilled && i === 60) {
        workerKilled = true;
        const [victim] = await Promise.all([killOneWorker(), workers.start()]);
        expect(victim).toBe(true);
      }
      if (!leaderKilled && i === 120) {
        const current = await leader();
        if (current) {
          leaderKilled = true;
          current.process.kill('SIGKILL');
          await startScheduler();
        }
      }
    }
    expect(leaderKilled).toBe(true);

    const runs = await waitFor(
      async () => {
        const { rows } = await t.db.query<{ run_key: string; n: number; succeeded: number }>(
          `SELECT run_key, count(*)::int AS n, count(*) FILTER (WHERE state = 'succeeded')::int AS succeeded FROM runs
           WHERE sensor_id = $1 AND run_key IS NOT NULL GROUP BY run_key`,
          [id],
        );
        return rows.length === 200 && rows.every((r) => r.succeeded === 1) ? rows : undefined;
      },
      'a succeeded run for each of the 200 files',
      90_000,
      250,
    );
    expect(runs.every((r) => r.n === 1)).toBe(true);
    const { rows: origins } = await t.db.query(`SELECT DISTINCT origin FROM runs WHERE sensor_id = $1 AND run_key IS NOT NULL`, [id]);
    expect(origins).toEqual([{ origin: 'sensor' }]);
    // The run keys and the runs agree one to one.
    const { rows: keys } = await t.db.query(
      `SELECT count(*)::int AS n FROM sensor_run_keys k JOIN runs r ON r.id = k.run_id AND r.run_key = k.run_key WHERE k.sensor_id = $1`,
      [id],
    );
    expect(keys[0].n).toBe(200);

    // Settled: no evaluation under way, the cursor at the last file.
    await waitFor(async () => ((await sensorRow(id)).cursor === 'file-199.csv' ? true : undefined), 'the cursor to reach the last file', 20_000);
    await waitFor(async () => ((await sensorRow(id)).evaluation_run_id === null ? true : undefined), 'no evaluation under way', 20_000);
    const sensor = await sensorRow(id);
    const ticks = await ticksOf(id);
    const committed = ticks.filter((tick) => tick.state === 'succeeded' || tick.state === 'skipped');
    // Each committed evaluation moved the cursor on from where the one before left it, one version at a time.
    expect(sensor.version).toBe(committed.length);
    committed.forEach((tick, i) => {
      expect(tick.version).toBe(i);
      if (i > 0) expect(tick.cursor_before).toEqual(committed[i - 1].cursor_after);
    });
    expect(committed.reduce((sum, tick) => sum + tick.created, 0)).toBe(200);
    // The look-back's replays asked again for files already run, and were counted as deduplicated.
    expect(committed.reduce((sum, tick) => sum + tick.deduplicated, 0)).toBeGreaterThan(0);
    for (const tick of committed) expect(tick.requested).toBe(tick.created + tick.deduplicated);
    // Every file was processed (at least once: a killed worker's run is executed again).
    const processed = new Set((await readFile(join(project.dir, 'processed.log'), 'utf8')).trim().split('\n').map((line) => line.split(' ')[0]));
    expect(processed.size).toBe(200);
    // The API says the same.
    const page = await client.get(`/v1/sensors/${id}/ticks?limit=500`);
    expect(page.status).toBe(200);
    expect(page.body.items.filter((tick: { state: string }) => tick.state !== 'evaluating').reduce((sum: number, tick: { created: number }) => sum + tick.created, 0)).toBe(200);
  }, 240_000);

  async function killOneWorker(): Promise<boolean> {
    // The process that processed the most recent file, so it is likely mid-run.
    const log = await readFile(join(project.dir, 'processed.log'), 'utf8').catch(() => '');
    const pid = Number(log.trim().split('\n').at(-1)?.split(' ')[1]);
    if (!pid) return false;
    try {
      process.kill(pid, 'SIGKILL');
      return true;
    } catch {
      return false;
    }
  }

  it('commits nothing of an evaluation whose lease was lost while it ran, nor of one during which the cursor moved', async () => {
    await Promise.all([startScheduler(), workers.start()]);
    await writeFile(join(project.dir, 'answer.json'), JSON.stringify({ runs: [{ runKey: 'stale', payload: { file: 'stale' } }], cursor: 'after-stale' }));
    const created = await client.post('/v1/sensors', {
      name: 'controlled',
      every: '1s',
      target: files('controlled'),
      run: { target: files('process-file') },
    });
    expect(created.status).toBe(201);
    const id = created.body.id as string;

    // The first evaluation runs, waiting for its release; its lease moves on under it (as when the reaper took it).
    const first = await waitFor(async () => {
      const { rows } = await t.db.query(`SELECT id FROM runs WHERE sensor_id = $1 AND run_key IS NULL AND state = 'running'`, [id]);
      return rows[0]?.id as string | undefined;
    }, 'the first evaluation to run');
    await t.db.query(`UPDATE runs SET lease_epoch = lease_epoch + 1 WHERE id = $1`, [first]);
    await writeFile(join(project.dir, 'release'), '');
    await waitFor(async () => {
      const { rows } = await t.db.query(`SELECT 1 FROM run_events WHERE run_id = $1 AND kind = 'lease_lost'`, [first]);
      return rows.length > 0 ? true : undefined;
    }, 'the stale evaluation to lose its lease');
    // Nothing of it was committed: no run, no key, the cursor where it was.
    expect((await t.db.query(`SELECT 1 FROM runs WHERE sensor_id = $1 AND run_key = 'stale'`, [id])).rows).toHaveLength(0);
    expect((await t.db.query(`SELECT 1 FROM sensor_run_keys WHERE sensor_id = $1`, [id])).rows).toHaveLength(0);
    expect(await sensorRow(id)).toMatchObject({ cursor: null, version: 0 });

    // The reaper gives the evaluation back; evaluated again from the same cursor, it commits once.
    await waitFor(async () => ((await sensorRow(id)).cursor === 'after-stale' ? true : undefined), 'the evaluation to be committed after the reaper', 30_000);
    const { rows: stale } = await t.db.query(`SELECT count(*)::int AS n FROM runs WHERE sensor_id = $1 AND run_key = 'stale'`, [id]);
    expect(stale[0].n).toBe(1);

    // An evaluation during which the cursor is moved commits nothing, and says why.
    await rm(join(project.dir, 'release'), { force: true });
    await writeFile(join(project.dir, 'answer.json'), JSON.stringify({ runs: [{ runKey: 'after-move', payload: { file: 'after-move' } }], cursor: 'never' }));
    const evaluating = await waitFor(async () => {
      const { rows } = await t.db.query(`SELECT id FROM runs WHERE sensor_id = $1 AND run_key IS NULL AND state = 'running' AND id <> $2`, [id, first]);
      return rows[0]?.id as string | undefined;
    }, 'an evaluation to run', 20_000);
    const moved = await client.post(`/v1/sensors/${id}/cursor`, { cursor: 'moved-by-hand' });
    expect(moved.status).toBe(200);
    await writeFile(join(project.dir, 'release'), '');
    const tick = await waitFor(async () => {
      const { rows } = await t.db.query(`SELECT * FROM sensor_ticks WHERE evaluation_run_id = $1 AND state <> 'evaluating'`, [evaluating]);
      return rows[0];
    }, 'the evaluation to be settled');
    expect(tick).toMatchObject({ state: 'failed', reason_code: 'SENSOR_CURSOR_MOVED', requested: 1, created: 0 });
    const ticksView = (await client.get(`/v1/sensors/${id}/ticks`)).body.items.find((item: { runId: string }) => item.runId === evaluating);
    expect(ticksView).toMatchObject({ state: 'failed', reasonCode: 'SENSOR_CURSOR_MOVED' });
    expect(tick).toMatchObject({ cursor_before: 'after-stale', cursor_after: 'moved-by-hand' });
    // The next evaluation starts from the cursor moved by hand.
    const next = await waitFor(async () => {
      const { rows } = await t.db.query(`SELECT * FROM sensor_ticks WHERE sensor_id = $1 AND state = 'succeeded' AND started_at > $2 ORDER BY started_at LIMIT 1`, [id, tick.started_at]);
      return rows[0];
    }, 'the next evaluation to be committed', 20_000);
    expect(next.cursor_before).toBe('moved-by-hand');
    expect(next).toMatchObject({ created: 1, cursor_after: 'never' });
  }, 120_000);
});
