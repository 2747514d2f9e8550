/** The worker role: the built-in worker (the SDK's KairosWorker) with the HTTP target it serves. */
import { Module } from '@nestjs/common';
import { BuiltInWorker } from './built-in-worker.service.js';
import { HttpTarget } from './targets/http/http-target.js';

@Module({
  providers: [HttpTarget, BuiltInWorker],
})
export class WorkerModule {}
