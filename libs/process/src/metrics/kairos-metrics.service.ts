/**
 * The instruments Kairos exposes at /metrics, owned in one place so role code records a fact with
 * one call. Counters and the lateness histogram are pushed by the code that saw the event; the
 * gauges of runs by state and queue depth are read from Postgres and the transport when Prometheus scrapes.
 */
import { Inject, Injectable } from '@nestjs/common';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { DEFAULT_QUEUE, RUN_STATES, TICK_OUTCOMES, type TickOutcome } from '@kairos/domain';
import { ledgerSize, type DatabaseClock, type Db, type LedgerSize } from '@kairos/ledger';
import { RunsQueues, withTimeout } from '@kairos/queue';
import { DATABASE, DATABASE_CLOCK } from '../tokens.js';

/** The BullMQ job states reported as `kairos_queue_jobs{state}`. */
export const QUEUE_JOB_STATES = ['waiting', 'active', 'delayed', 'failed', 'prioritized'] as const;

/** A scrape answers even when Postgres or the transport does not: a gauge whose source is slower than this is left out. */
const SCRAPE_SOURCE_TIMEOUT_MS = 2_000;

/** From "on time" to a minute late: past that, lateness is an outage, which the ledger records as one. */
const LATENESS_BUCKETS_SECONDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

@Injectable()
export class KairosMetrics {
  private readonly slotsFiredTotal: Counter<'outcome'>;
  private readonly fireLateness: Histogram;
  private readonly runVerdictsTotal: Counter<'state' | 'reason_code'>;
  private readonly leaseLossesTotal: Counter;
  private readonly prunedRowsTotal: Counter<'table'>;
  private readonly scheduleLateTotal: Counter;
  private readonly deliveryAttemptsTotal: Counter<'outcome'>;
  private ledgerSizeRead: Promise<LedgerSize | null> | null = null;

  constructor(
    private readonly registry: Registry,
    @Inject(DATABASE) private readonly db: Db,
    private readonly queues: RunsQueues,
    @Inject(DATABASE_CLOCK) clock: DatabaseClock,
  ) {
    const registers = [registry];
    const clockOffset: Gauge = new Gauge({
      name: 'kairos_clock_offset_seconds',
      help: "The database's clock minus this host's, as last measured: positive when the host's clock is behind. Kairos decides every instant by the database's clock",
      registers,
      collect: () => {
        const reading = clock.lastReading;
        if (reading) clockOffset.set(reading.offsetMs / 1_000);
      },
    });
    this.slotsFiredTotal = new Counter({
      name: 'kairos_slots_fired_total',
      help: 'Schedule slots the tick wrote a tick row for, by outcome',
      labelNames: ['outcome'],
      registers,
    });
    for (const outcome of TICK_OUTCOMES) this.slotsFiredTotal.inc({ outcome }, 0);
    this.fireLateness = new Histogram({
      name: 'kairos_fire_lateness_seconds',
      help: 'Time from a scheduled slot to the claim of its run by a worker (first attempts of schedule runs)',
      buckets: LATENESS_BUCKETS_SECONDS,
      registers,
    });
    this.runVerdictsTotal = new Counter({
      name: 'kairos_run_verdicts_total',
      help: 'Verdicts workers wrote for run attempts, by resulting state (or retry) and reason code',
      labelNames: ['state', 'reason_code'],
      registers,
    });
    this.scheduleLateTotal = new Counter({
      name: 'kairos_schedule_late_total',
      help: "Slots whose run had not succeeded within their schedule's expect.succeededWithin (each counted once, by the leader that found it late)",
      registers,
    });
    this.deliveryAttemptsTotal = new Counter({
      name: 'kairos_subscription_delivery_attempts_total',
      help: 'Attempts to deliver an event to a subscription, by outcome (delivered, failed)',
      labelNames: ['outcome'],
      registers,
    });
    for (const outcome of ['delivered', 'failed']) this.deliveryAttemptsTotal.inc({ outcome }, 0);
    this.leaseLossesTotal = new Counter({
      name: 'kairos_lease_losses_total',
      help: 'Run leases this worker lost: its execution was stopped or its verdict refused',
      registers,
    });
    this.prunedRowsTotal = new Counter({
      name: 'kairos_pruned_rows_total',
      help: 'Rows the retention pruner deleted, by table',
      labelNames: ['table'],
      registers,
    });
    const ledgerRows: Gauge<'table'> = new Gauge({
      name: 'kairos_ledger_rows',
      help: "Rows per ledger table, Postgres' estimate read at scrape time",
      labelNames: ['table'],
      registers,
      collect: async () => {
        ledgerRows.reset();
        for (const table of (await this.scrapeLedgerSize())?.tables ?? []) ledgerRows.set({ table: table.table }, table.rows);
      },
    });
    const ledgerBytes: Gauge<'table'> = new Gauge({
      name: 'kairos_ledger_bytes',
      help: 'Bytes on disk per ledger table (with indexes and TOAST), and the whole database as table="*", read at scrape time',
      labelNames: ['table'],
      registers,
      collect: async () => {
        ledgerBytes.reset();
        const size = await this.scrapeLedgerSize();
        if (!size) return;
        for (const table of size.tables) ledgerBytes.set({ table: table.table }, table.bytes);
        ledgerBytes.set({ table: '*' }, size.databaseBytes);
      },
    });
    const runsByState: Gauge<'state'> = new Gauge({
      name: 'kairos_runs',
      help: 'Runs in the ledger by state, read from Postgres at scrape time',
      labelNames: ['state'],
      registers,
      collect: () => this.collectRuns(runsByState),
    });
    const queueJobs: Gauge<'state'> = new Gauge({
      name: 'kairos_queue_jobs',
      help: 'Jobs in the BullMQ runs queue by state, read from the transport at scrape time (absent when it does not answer)',
      labelNames: ['state'],
      registers,
      collect: () => this.collectQueue(queueJobs),
    });
  }

  /** Counts the ticks a tick transaction committed; ticks another firer had already written are not passed here. */
  slotsFired(ticks: readonly { outcome: TickOutcome }[]): void {
    for (const { outcome } of ticks) this.slotsFiredTotal.inc({ outcome });
  }

  lateness(seconds: number): void {
    this.fireLateness.observe(Math.max(0, seconds));
  }

  /** `state` is the state the verdict wrote, or `retry` for an attempt that returned the run to the queue. */
  verdict(state: string, reasonCode: string): void {
    this.runVerdictsTotal.inc({ state, reason_code: reasonCode });
  }

  leaseLost(): void {
    this.leaseLossesTotal.inc();
  }

  scheduleLate(slots: number): void {
    this.scheduleLateTotal.inc(slots);
  }

  deliveryAttempt(outcome: 'delivered' | 'failed'): void {
    this.deliveryAttemptsTotal.inc({ outcome });
  }

  pruned(table: string, rows: number): void {
    this.prunedRowsTotal.inc({ table }, rows);
  }

  /**
   * Registers `kairos_leader` (1 while this process leads). Only a process running the scheduler
   * role calls this, so `count(kairos_leader)` is the number of schedulers and `sum` the number
   * leading. `isLeading` is asked at scrape time, so the gauge is never staler than the lease.
   */
  reportLeadership(isLeading: () => boolean): void {
    const leader: Gauge = new Gauge({
      name: 'kairos_leader',
      help: '1 while this scheduler holds the leader lease, 0 while it stands by',
      registers: [this.registry],
      collect: () => leader.set(isLeading() ? 1 : 0),
    });
  }

  /** Registers `kairos_owned_partitions`: how many tick partitions this scheduler owns, asked at scrape time. */
  reportPartitions(owned: () => number): void {
    const gauge: Gauge = new Gauge({
      name: 'kairos_owned_partitions',
      help: 'Tick partitions this scheduler owns through their leases',
      registers: [this.registry],
      collect: () => gauge.set(owned()),
    });
  }

  private async collectRuns(gauge: Gauge<'state'>): Promise<void> {
    gauge.reset();
    const { rows } = await scrapeSource(
      this.db.query<{ state: string; n: number }>('SELECT state, count(*)::int AS n FROM runs GROUP BY state'),
    ).catch(() => ({ rows: null }));
    if (!rows) return;
    const counts = new Map(rows.map((r) => [r.state, r.n]));
    for (const state of RUN_STATES) gauge.set({ state }, counts.get(state) ?? 0);
  }

  /** Both ledger gauges are collected in the same scrape; they share one read (a cheap statistics lookup). */
  private scrapeLedgerSize(): Promise<LedgerSize | null> {
    this.ledgerSizeRead ??= scrapeSource(ledgerSize(this.db))
      .catch(() => null)
      .finally(() => (this.ledgerSizeRead = null));
    return this.ledgerSizeRead;
  }

  private async collectQueue(gauge: Gauge<'state'>): Promise<void> {
    gauge.reset();
    const counts = await scrapeSource(this.queues.jobCounts(DEFAULT_QUEUE, ...QUEUE_JOB_STATES)).catch(() => null);
    if (!counts) return;
    for (const state of QUEUE_JOB_STATES) gauge.set({ state }, counts[state] ?? 0);
  }
}

/** A scrape source's answer, or a rejection once it has kept the scrape waiting too long. */
const scrapeSource = <T>(work: Promise<T>): Promise<T> => withTimeout(work, SCRAPE_SOURCE_TIMEOUT_MS, `no answer within ${SCRAPE_SOURCE_TIMEOUT_MS} ms`);
