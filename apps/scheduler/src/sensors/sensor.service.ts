/**
 * The leader's sensor loop: commits what ended evaluations answered (each in a transaction of its
 * own, see SensorEvaluationRepository), abandons those that outlived their timeout, and starts the
 * evaluations of due sensors, handing their runs to the transport. An evaluation that ends wakes
 * it (NOTIFY kairos_sensors); otherwise it sleeps until the next sensor is due, at most a second.
 * One evaluation at a time per sensor holds across schedulers: a sensor evaluating is not due.
 */
import { Inject, Injectable, Logger, type BeforeApplicationShutdown, type OnApplicationBootstrap, type OnModuleInit } from '@nestjs/common';
import type { KairosConfig } from '@kairos/config';
import { RunRepository, SENSORS_CHANNEL, SensorEvaluationRepository, listenTo, type Db, type Listener } from '@kairos/ledger';
import { DATABASE, KAIROS_CONFIG, RunDispatcher, leaderActor, type GatedTask } from '@kairos/process';
import { LeadershipService } from '../leadership/leadership.service.js';

const IDLE_MS = 1_000;
const BATCH = 100;

@Injectable()
export class SensorService implements OnModuleInit, OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('Sensors');
  private readonly evaluations = new SensorEvaluationRepository(new RunRepository());
  private task: GatedTask | null = null;
  private listener: Listener | null = null;

  constructor(
    @Inject(DATABASE) private readonly db: Db,
    @Inject(KAIROS_CONFIG) private readonly config: KairosConfig,
    private readonly leadership: LeadershipService,
    private readonly dispatcher: RunDispatcher,
  ) {}

  onModuleInit(): void {
    this.task = this.leadership.whileLeading('Sensors', IDLE_MS, async (term) => {
      const actor = leaderActor('scheduler', term.holder);
      const more = await this.passOnce(actor);
      if (more) return 0;
      const dueInMs = await this.evaluations.msUntilNextDue(this.db);
      return dueInMs === null ? IDLE_MS : Math.min(IDLE_MS, Math.max(0, Math.ceil(dueInMs)));
    });
  }

  onApplicationBootstrap(): void {
    this.listener = listenTo(this.config.databaseDirectUrl, SENSORS_CHANNEL, () => this.task?.wake());
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.listener?.close();
  }

  /** Commits ended evaluations, then starts due ones; true when a batch was full and more may wait. */
  async passOnce(actor: string): Promise<boolean> {
    const ended = await this.evaluations.ended(this.db, BATCH);
    for (const evaluation of ended) {
      const committed = await this.evaluations.commit(this.db, evaluation, actor);
      if (!committed) continue;
      if (committed.reasonCode) this.logger.warn({ msg: `sensor ${evaluation.tick.sensorId}: evaluation ${evaluation.tick.evaluationRunId} ${committed.state} (${committed.reasonCode})`, sensorId: evaluation.tick.sensorId });
      await this.dispatcher.dispatch(committed.dispatch);
    }
    const started = await this.evaluations.startDue(this.db, BATCH, actor);
    await this.dispatcher.dispatch(started);
    return ended.length === BATCH || started.length === BATCH;
  }
}
