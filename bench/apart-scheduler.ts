/**
 * The scheduler's process of the throughput phase with the roles apart (see apart.ts): Kairos from
 * the build (dist/) with the scheduler role alone, and the phase's producer in it, as in the
 * one-process phase, where the producer shares the process with both roles. Told over IPC how many
 * runs to make, it answers `produced` once they are all handed over, and stops when told to.
 */
import pg from 'pg';
import { produceRuns } from './producer.js';

const dist = new URL('../dist/', import.meta.url).href;
const { startKairos, RunDispatcher } = (await import(`${dist}libs/process/src/index.js`)) as typeof import('@kairos/process');
const { SchedulerModule } = (await import(`${dist}apps/scheduler/src/scheduler.module.js`)) as typeof import('../apps/scheduler/src/scheduler.module.js');
const { RunRepository, dispatchItemOf, inTransaction, manualRun } = (await import(`${dist}libs/ledger/src/index.js`)) as typeof import('@kairos/ledger');
const { newId } = (await import(`${dist}libs/domain/src/index.js`)) as typeof import('@kairos/domain');

export type ToScheduler = { produce: number; queue: string } | { stop: true };
export type FromScheduler = { ready: true } | { produced: true };

const send = (message: FromScheduler): void => void process.send!(message);
const { app } = await startKairos({ name: 'bench-scheduler', defaultRoles: ['scheduler'], modules: { scheduler: SchedulerModule } });
const db = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 4 });
process.on('message', (message: ToScheduler) => {
  if ('stop' in message) {
    void Promise.all([app.close(), db.end()]).then(() => process.exit(0));
    return;
  }
  void produceRuns({ newId, manualRun, dispatchItemOf, inTransaction, runs: new RunRepository() }, db, app.get(RunDispatcher), message.produce, message.queue).then(
    () => send({ produced: true }),
    (error: Error) => {
      process.stderr.write(`bench scheduler: ${error.stack ?? error.message}\n`);
      process.exit(1);
    },
  );
});
send({ ready: true });
