import { runKairos } from '@kairos/process';
import { ApiModule } from './api.module.js';

await runKairos({ name: 'api', defaultRoles: ['api'], modules: { api: ApiModule } });
