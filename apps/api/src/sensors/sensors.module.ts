/** Sensors over REST and GraphQL: declare, change, pause and delete them, list their ticks, move or reset their cursor; and their part of an apply. */
import { Module } from '@nestjs/common';
import { SensorRepository } from '@kairos/ledger';
import { TargetsModule } from '../targets/targets.module.js';
import { WorkersModule } from '../workers/workers.module.js';
import { SensorApply } from './sensor-apply.js';
import { SensorsController } from './sensors.controller.js';
import { SensorsResolver } from './sensors.resolver.js';
import { SensorsService } from './sensors.service.js';

@Module({
  imports: [TargetsModule, WorkersModule],
  controllers: [SensorsController],
  providers: [{ provide: SensorRepository, useValue: new SensorRepository() }, SensorsService, SensorsResolver, SensorApply],
  exports: [SensorApply],
})
export class SensorsModule {}
