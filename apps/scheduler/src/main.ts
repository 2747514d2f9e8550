import { runKairos } from '@kairos/runtime';
import { SchedulerModule } from './scheduler.module.js';

await runKairos({ name: 'scheduler', defaultRoles: ['scheduler'], modules: { scheduler: SchedulerModule } });
