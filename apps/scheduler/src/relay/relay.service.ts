/**
 * The relay: hands BullMQ the committed runs the transport refused. The tick, the API and the
 * worker dispatch their own runs right after committing, and the dispatcher clears the enqueued
 * mark of what the transport refused (Redis away for a moment); this pass hands those over again.
 * A crash between commit and enqueue is not the relay's: the runs were marked enqueued at insert,
 * so the reconciler finds them overdue without a job and re-creates it. It also hands over the runs
 * a concurrency key or queue limit released, woken by the release's notification, and fills the
 * fair-share windows runs left (woken the same way) with the next turns.
 */
import { Inject, Injectable, type BeforeApplicationShutdown, type OnApplicationBootstrap, type OnModuleInit } from '@nestjs/common';
import type { KairosConfig } from '@kairos/config';
import { RELEASED_CHANNEL, RunRecoveryRepository, listenTo, type Db, type Listener } from '@kairos/ledger';
import { DATABASE, KAIROS_CONFIG, RunDispatcher, type GatedTask } from '@kairos/process';
import { LeadershipService } from '../leadership/leadership.service.js';

const RELAY_BATCH = 500;

@Injectable()
export class RelayService implements OnModuleInit, OnApplicationBootstrap, BeforeApplicationShutdown {
  private task: GatedTask | null = null;
  private listener: Listener | null = null;

  constructor(
    @Inject(DATABASE) private readonly db: Db,
    @Inject(KAIROS_CONFIG) private readonly config: KairosConfig,
    private readonly leadership: LeadershipService,
    private readonly runs: RunRecoveryRepository,
    private readonly dispatcher: RunDispatcher,
  ) {}

  onModuleInit(): void {
    const interval = this.config.scheduler.relayIntervalMs;
    this.task = this.leadership.whileLeading('Relay', interval, async () => ((await this.relayOnce()) === RELAY_BATCH ? 0 : interval));
  }

  /** A limit that released held runs wakes the relay at once: a freed place is taken within milliseconds. */
  onApplicationBootstrap(): void {
    this.listener = listenTo(this.config.databaseDirectUrl, RELEASED_CHANNEL, () => this.task?.wake());
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.listener?.close();
  }

  /**
   * Fills the fair-share windows that runs left (claimed, cancelled) and hands the runs let in
   * over, then dispatches one batch of undispatched runs; returns how many were handed over.
   */
  async relayOnce(): Promise<number> {
    const turns = await this.runs.fillFairShare(this.db);
    if (turns.length > 0 && !(await this.dispatcher.dispatch(turns))) throw new Error(`the transport refused ${turns.length} runs; they stay queued in Postgres`);
    const pending = await this.runs.listUndispatched(this.db, RELAY_BATCH);
    if (pending.length === 0) return 0;
    await this.runs.markEnqueued(this.db, pending.map((p) => p.id));
    if (!(await this.dispatcher.dispatch(pending))) throw new Error(`the transport refused ${pending.length} runs; they stay queued in Postgres`);
    return pending.length;
  }
}
