/**
 * Durable throughput with the roles apart: the scheduler (with the phase's producer, as in the
 * one-process phase) and the built-in worker each in a process of its own, both from the build
 * (dist/), so that Node's CPU per run is read for each role from /proc. The same runs as the
 * one-process phase (kairos.ts): written 500 to a transaction and handed to BullMQ by the
 * scheduler's dispatcher, run by the worker. The phase ends when the ledger holds no queued or
 * running run, asked through the relay's, the reconciler's and the reaper's partial indexes (a poll that
 * costs Postgres little), every 100 ms once the producer is done.
 *
 * KAIROS_BENCH_CPU_PROF=<dir> starts both processes with `node --cpu-prof` into that folder, and
 * writes beside each pair of profiles the phase's bounds on the monotonic clock V8 stamps its
 * samples with (process.hrtime), so that their reader can leave out start-up and shutdown.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import type { FromScheduler, ToScheduler } from './apart-scheduler.js';
import { CONCURRENCY, RUNS, kairosEnv, type Throughput, type TransportKind } from './kairos.js';
import { NODE_FLAGS, ROOT, cpuPerRun, cpuSpent, sandbox, sleep, startBuilt, until, type CpuSpent } from './sandbox.js';

/** The throughput with the roles apart: the rate, and the CPU per run of each process (`cpu.node`: both together). */
export interface ApartThroughput extends Throughput {
  scheduler: number;
  worker: number;
}

/** Whether the build is there to start the roles from; without it the phase is left out. */
export const apartBuilt = (): boolean => existsSync(`${ROOT}dist/apps/worker/src/main.js`) && existsSync(`${ROOT}dist/apps/scheduler/src/scheduler.module.js`);

const PROFILE_DIR = process.env.KAIROS_BENCH_CPU_PROF;
let phases = 0;

export async function kairosApartThroughput(kind: TransportKind): Promise<ApartThroughput> {
  const phase = `apart-${kind}-${++phases}`;
  // A folder per process: Node writes a profile per thread (the loader's hooks have one), named by pid and thread.
  const named = (role: string): string[] => (PROFILE_DIR ? ['--cpu-prof', `--cpu-prof-dir=${PROFILE_DIR}/${phase}-${role}`] : []);
  if (PROFILE_DIR) mkdirSync(PROFILE_DIR, { recursive: true });
  const box = await sandbox(`apart_tp_${kind}`, undefined, kind);
  const env = { ...kairosEnv(kind, box), LOG_FORMAT: 'json' };
  // The scheduler first: it migrates the fresh database, which the worker then finds ready.
  const scheduler = spawn(process.execPath, [...NODE_FLAGS, ...named('scheduler'), '--import', '@swc-node/register/esm-register', 'bench/apart-scheduler.ts'], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const heard = (what: 'ready' | 'produced'): Promise<void> =>
    new Promise((resolve, reject) => {
      const onMessage = (m: FromScheduler): void => {
        if (what in m) {
          scheduler.off('message', onMessage);
          resolve();
        }
      };
      scheduler.on('message', onMessage);
      scheduler.once('exit', (code) => reject(new Error(`bench: the scheduler process exited with ${code}`)));
    });
  const tell = (m: ToScheduler): void => void scheduler.send(m);
  const schedulerExited = new Promise<void>((resolve) => scheduler.once('exit', () => resolve()));
  let worker: ReturnType<typeof startBuilt> | null = null;
  try {
    await heard('ready');
    worker = startBuilt('worker', 'worker', box, { ...env, KAIROS_WORKER_CONCURRENCY: String(CONCURRENCY) }, named('worker'));
    await worker.ready;
    const pids = { scheduler: scheduler.pid!, worker: worker.process.pid! };
    const from = { scheduler: cpuSpent([pids.scheduler]), worker: cpuSpent([pids.worker]) };
    const startUs = process.hrtime.bigint() / 1_000n;
    const started = performance.now();
    const produced = heard('produced');
    tell({ produce: RUNS, queue: 'default' });
    await produced;
    await until(
      async () =>
        (
          await box.db.query(
            `SELECT NOT EXISTS (SELECT 1 FROM runs WHERE state = 'queued' AND enqueued_at IS NOT NULL AND available_at < 'infinity')
                AND NOT EXISTS (SELECT 1 FROM runs WHERE state = 'queued' AND enqueued_at IS NULL AND available_at < 'infinity')
                AND NOT EXISTS (SELECT 1 FROM runs WHERE state = 'running' AND target->>'type' <> 'steps') AS done`,
          )
        ).rows[0].done as boolean,
      300_000,
      'Kairos runs (roles apart)',
      100,
    );
    const elapsed = performance.now() - started;
    const endUs = process.hrtime.bigint() / 1_000n;
    const cpu: Record<'scheduler' | 'worker', CpuSpent> = { scheduler: cpuPerRun(from.scheduler, RUNS, [pids.scheduler]), worker: cpuPerRun(from.worker, RUNS, [pids.worker]) };
    if (PROFILE_DIR) writeFileSync(`${PROFILE_DIR}/${phase}.json`, JSON.stringify({ startUs: Number(startUs), endUs: Number(endUs), pids }));
    const durable = (await box.db.query(`SELECT count(*)::int AS n FROM runs WHERE state = 'succeeded'`)).rows[0].n as number;
    if (durable !== RUNS) throw new Error(`bench: roles apart, ${durable} of ${RUNS} runs succeeded in the ledger`);
    return {
      perSecond: (RUNS / elapsed) * 1000,
      // Postgres and Redis as either process read them: the same servers over the same phase.
      cpu: { node: cpu.scheduler.node + cpu.worker.node, postgres: cpu.worker.postgres, redis: cpu.worker.redis },
      scheduler: cpu.scheduler.node,
      worker: cpu.worker.node,
    };
  } finally {
    worker?.process.kill('SIGTERM');
    if (scheduler.connected) tell({ stop: true });
    await Promise.race([Promise.all([worker?.exited, schedulerExited]), sleep(20_000)]);
    if (worker?.process.exitCode === null) worker.process.kill('SIGKILL');
    if (scheduler.exitCode === null) scheduler.kill('SIGKILL');
    await box.drop();
  }
}
