/** The worker role: the BullMQ worker, the lease keeper, and the targets runs execute. */
import { Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { BatchedLedger } from './execution/batched-ledger.service.js';
import { RunExecutor } from './execution/run-executor.service.js';
import { RunWorker } from './execution/run-worker.service.js';
import { LeaseKeeper } from './heartbeat/lease-keeper.service.js';
import { BUILTIN_HANDLERS } from './targets/handler/builtin.handlers.js';
import { HandlerRegistry } from './targets/handler/handler.registry.js';
import { HttpTarget } from './targets/http/http-target.js';
import { TargetRunner } from './targets/target-runner.js';

@Module({
  imports: [DiscoveryModule],
  providers: [...BUILTIN_HANDLERS, HandlerRegistry, HttpTarget, TargetRunner, LeaseKeeper, BatchedLedger, RunExecutor, RunWorker],
})
export class WorkerModule {}
