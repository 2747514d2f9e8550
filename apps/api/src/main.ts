import { runKairos } from '@kairos/runtime';
import { ApiModule } from './api.module.js';

await runKairos({ name: 'api', defaultRoles: ['api'], modules: { api: ApiModule } });
