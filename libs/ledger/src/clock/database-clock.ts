/**
 * The one clock that decides "when": the database's. A host's wall clock can be wrong by seconds
 * (a VM resumed from suspend, a node whose NTP failed) or stepped while Kairos runs; the database's
 * is the one every process shares. It is read cheaply: a few `clock_timestamp()` round trips every
 * few seconds anchor it to this process's monotonic clock, and `now()` runs forward from the anchor
 * without a query. A host's clock only measures durations.
 */
import { performance } from 'node:perf_hooks';
import { anchorOf, remoteNow, type ClockAnchor, type ClockSample } from '@kairos/domain';
import { withConnection, type Db } from '../database.js';

export interface DatabaseClockOptions {
  /** How often the anchor is taken again. */
  refreshMs?: number;
  /** Round trips per refresh; the tightest one anchors. */
  samples?: number;
}

/** A change of the host's wall clock against its monotonic one larger than this is a step (NTP, an operator), not drift. */
export const CLOCK_STEP_MS = 500;
/** How often the host's wall clock is compared with its monotonic one, to notice a step at once. */
const STEP_WATCH_MS = 250;

/** What a refresh found, for metrics and logs: how far this host's wall clock is from the database's. */
export interface ClockReading {
  /** Database time minus host wall time, in ms: positive when the host's clock is behind. */
  offsetMs: number;
  uncertaintyMs: number;
}

type ReadingListener = (reading: ClockReading, previous: ClockReading | null) => void;

export class DatabaseClock {
  private anchor: ClockAnchor | null = null;
  private reading: ClockReading | null = null;
  private timer: NodeJS.Timeout | null = null;
  private stepWatch: NodeJS.Timeout | null = null;
  private readonly listeners: ReadingListener[] = [];
  private readonly refreshMs: number;
  private readonly samples: number;

  constructor(
    private readonly db: Db,
    options: DatabaseClockOptions = {},
  ) {
    this.refreshMs = options.refreshMs ?? 10_000;
    this.samples = options.samples ?? 3;
  }

  /** The database's time now, in whole epoch ms (as Date.now() gives). Before the first sync, the host's. */
  now(): number {
    return this.anchor === null ? Date.now() : Math.round(remoteNow(this.anchor, performance.now()));
  }

  /** The database's time now, as a Date. */
  date(): Date {
    return new Date(this.now());
  }

  /** The last refresh's offset of the host's wall clock from the database's; null before the first. */
  get lastReading(): ClockReading | null {
    return this.reading;
  }

  /** Called after each refresh with what it found and what the one before found. */
  onReading(listener: ReadingListener): void {
    this.listeners.push(listener);
  }

  /** Takes the anchor now: a few round trips on one connection, the tightest one kept. */
  async sync(): Promise<ClockReading> {
    const samples: ClockSample[] = [];
    await withConnection(this.db, async (client) => {
      for (let i = 0; i < this.samples; i++) {
        const sentAt = performance.now();
        const { rows } = await client.query<{ ms: number }>(`SELECT (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS ms`);
        samples.push({ sentAt, receivedAt: performance.now(), remoteMs: rows[0]!.ms, wallMs: Date.now() });
      }
    });
    const anchor = anchorOf(samples)!;
    this.anchor = anchor;
    const previous = this.reading;
    this.reading = { offsetMs: anchor.offsetMs, uncertaintyMs: anchor.uncertaintyMs };
    for (const listener of this.listeners) listener(this.reading, previous);
    return this.reading;
  }

  /**
   * Syncs now, then every refresh interval until stop(), and at once when the host's wall clock is
   * stepped; a failed refresh keeps the last anchor.
   */
  async start(): Promise<void> {
    await this.sync();
    const refresh = (): void => void this.sync().catch(() => undefined);
    this.timer = setInterval(refresh, this.refreshMs);
    this.timer.unref();
    let wallMinusMonotonic = Date.now() - performance.now();
    this.stepWatch = setInterval(() => {
      const now = Date.now() - performance.now();
      if (Math.abs(now - wallMinusMonotonic) > CLOCK_STEP_MS) refresh();
      wallMinusMonotonic = now;
    }, STEP_WATCH_MS);
    this.stepWatch.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    if (this.stepWatch) clearInterval(this.stepWatch);
    this.timer = null;
    this.stepWatch = null;
  }
}
