import { runKairos } from '@kairos/process';
import { WorkerModule } from './worker.module.js';

await runKairos({ name: 'worker', defaultRoles: ['worker'], modules: { worker: WorkerModule } });
