import { runKairos } from '@kairos/process';
import { SchedulerModule } from './scheduler.module.js';

await runKairos({ name: 'scheduler', defaultRoles: ['scheduler'], modules: { scheduler: SchedulerModule } });
