/** All roles in one process: what `npm start` runs. KAIROS_ROLES narrows it (e.g. "api,worker"). */
import { runKairos } from '@kairos/process';
import { ApiModule } from '../../api/src/api.module.js';
import { SchedulerModule } from '../../scheduler/src/scheduler.module.js';
import { WorkerModule } from '../../worker/src/worker.module.js';

await runKairos({
  name: 'all-in-one',
  defaultRoles: ['api', 'scheduler', 'worker'],
  modules: { api: ApiModule, scheduler: SchedulerModule, worker: WorkerModule },
});
