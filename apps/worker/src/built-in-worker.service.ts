/**
 * The built-in worker: a KairosWorker (the SDK's, the one users run) on the default queue, with the
 * built-in handlers and the HTTP target registered through it, so there is one execution path.
 * It starts once the application is up and stops on shutdown, letting running executions finish
 * for the grace period and handing the rest back.
 */
import { Inject, Injectable, Logger, type BeforeApplicationShutdown, type OnApplicationBootstrap } from '@nestjs/common';
import type { KairosConfig } from '@kairos/config';
import { DEFAULT_QUEUE } from '@kairos/domain';
import type { Db } from '@kairos/ledger';
import { DATABASE, KAIROS_CONFIG, KairosMetrics } from '@kairos/process';
import { KairosWorker } from '@kairos/sdk';
import { BUILT_IN_HANDLERS } from './targets/handler/builtin.handlers.js';
import { HttpTarget } from './targets/http/http-target.js';

@Injectable()
export class BuiltInWorker implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly worker: KairosWorker;

  constructor(@Inject(KAIROS_CONFIG) config: KairosConfig, @Inject(DATABASE) db: Db, http: HttpTarget, metrics: KairosMetrics) {
    this.worker = new KairosWorker({
      databaseUrl: config.databaseUrl,
      transport: config.transport,
      queuePrefix: config.queuePrefix,
      queue: DEFAULT_QUEUE,
      concurrency: config.worker.concurrency,
      leaseTtlMs: config.worker.runLeaseTtlMs,
      shutdownGraceMs: config.shutdownGraceMs,
      reaperSkewMs: config.scheduler.reaperSkewMs,
      startMarginMs: config.worker.startMarginMs,
      handlers: BUILT_IN_HANDLERS,
      version: config.worker.version ?? 'built-in',
      upgrade: config.worker.upgrade,
      logger: new Logger('Worker'),
      observer: metrics,
      pool: db,
      httpTarget: (run, target, signal) => http.call(run, target, signal),
    });
  }

  /** The lease owner name of this process's worker. */
  get id(): string {
    return this.worker.id;
  }

  async onApplicationBootstrap(): Promise<void> {
    await this.worker.start();
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.worker.stop();
  }
}
