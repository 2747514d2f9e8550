/**
 * Run statistics of the caller's namespace, computed by the ledger in one statement: the runs that
 * ended in a window, by the bucket of their finished_at, with their counts per terminal state and
 * the percentiles of their durations and lateness.
 *
 * No index covers finished_at (an index on a column a run's verdict changes would make every
 * verdict update the index as well as the heap). Run ids are UUIDv7, so the runs that can have
 * ended in the window are a range of the primary key: those created from RUN_STATS_LOOKBACK_MS
 * before its start to its end. The statement walks that range of runs_listing and keeps the runs
 * whose finished_at falls in the window.
 */
import { Inject, Injectable } from '@nestjs/common';
import { ValidationError, formatInstant } from '@kairos/domain';
import { RUN_STATS_BUCKETS, RunStatsQuery, readQuery, type RunStats as RunStatsShape, type RunStatsBucket } from '@kairos/domain/wire';
import { targetQueueSql, type Db } from '@kairos/ledger';
import { DATABASE } from '@kairos/process';
import type { z } from 'zod';
import type { CallerContext } from '../auth/request-context.js';

export type RunStatsView = z.output<typeof RunStatsShape>;

/**
 * How long before the window a run may have been created and still be counted when it ends in it:
 * a day, the longest timeout of one attempt. Every day of lookback is a day of runs read from the
 * heap (a day of runs at a million a month takes the statement from about 100 to about 200 ms), so
 * a run that took longer from its creation to its end is left out.
 */
export const RUN_STATS_LOOKBACK_MS = 86_400_000;
/** The most buckets one answer holds (a day of minutes is 1,440). */
export const MAX_RUN_STATS_BUCKETS = 1_500;
const DEFAULT_WINDOW_MS = 86_400_000;
const DEFAULT_BUCKET: RunStatsBucket = '1h';
/** Run ids carry their creator's clock; allow it to run this far ahead of the database's. */
const CLOCK_SKEW_ALLOWANCE_MS = 60_000;

/** The smallest and the greatest UUIDv7 of the millisecond `ms`. */
function uuidv7Bound(ms: number, end: 'floor' | 'ceiling'): string {
  const time = Math.max(0, Math.floor(ms)).toString(16).padStart(12, '0');
  return `${time.slice(0, 8)}-${time.slice(8, 12)}-${end === 'floor' ? '0000-0000-000000000000' : 'ffff-ffff-ffffffffffff'}`;
}

export interface RunStatsWindow {
  scheduleId?: string;
  queue?: string;
  sinceMs: number;
  untilMs: number;
  bucket: RunStatsBucket;
}

/** The window a query asks for, with its defaults, refused (400 naming the field) when it is empty or holds too many buckets. */
export function runStatsWindow(params: Record<string, unknown>, nowMs = Date.now()): RunStatsWindow {
  const query = readQuery(RunStatsQuery, params);
  const bucket = query.bucket ?? DEFAULT_BUCKET;
  const bucketMs = RUN_STATS_BUCKETS[bucket];
  const untilMs = query.until ?? nowMs;
  const givenSince = query.since ?? untilMs - DEFAULT_WINDOW_MS;
  if (givenSince >= untilMs) throw new ValidationError('VALIDATION_FAILED', 'since', `since must be before until (${formatInstant(untilMs)})`);
  const sinceMs = Math.floor(givenSince / bucketMs) * bucketMs;
  const buckets = Math.ceil((untilMs - sinceMs) / bucketMs);
  if (buckets > MAX_RUN_STATS_BUCKETS) {
    throw new ValidationError(
      'VALIDATION_FAILED',
      'bucket',
      `the window from since to until holds ${buckets} buckets of ${bucket}; at most ${MAX_RUN_STATS_BUCKETS}: choose a longer bucket or a shorter window`,
    );
  }
  return { scheduleId: query.scheduleId, queue: query.queue, sinceMs, untilMs, bucket };
}

interface BucketRow {
  start: Date;
  succeeded: number;
  failed: number;
  dead: number;
  cancelled: number;
  duration_p50_ms: number | null;
  duration_p95_ms: number | null;
  lateness_p95_ms: number | null;
}

@Injectable()
export class StatsService {
  constructor(@Inject(DATABASE) private readonly db: Db) {}

  /** GET /v1/stats/runs. */
  async runs(caller: CallerContext, params: Record<string, unknown>): Promise<RunStatsView> {
    return this.runStats(this.db, caller.namespaceId, runStatsWindow(params));
  }

  async runStats(db: Db, namespaceId: string, window: RunStatsWindow): Promise<RunStatsView> {
    const values: unknown[] = [
      namespaceId,
      uuidv7Bound(window.sinceMs - RUN_STATS_LOOKBACK_MS, 'floor'),
      uuidv7Bound(window.untilMs + CLOCK_SKEW_ALLOWANCE_MS, 'ceiling'),
      new Date(window.sinceMs),
      new Date(window.untilMs),
      `${RUN_STATS_BUCKETS[window.bucket]} milliseconds`,
    ];
    const filters: string[] = [];
    if (window.scheduleId !== undefined) {
      values.push(window.scheduleId);
      filters.push(`AND r.schedule_id = $${values.length}::uuid`);
    }
    if (window.queue !== undefined) {
      values.push(window.queue);
      filters.push(`AND r.target->>'type' <> 'steps' AND ${targetQueueSql('r')} = $${values.length}`);
    }
    const { rows } = await db.query<BucketRow>(
      `WITH ended AS (
         SELECT date_bin($6::interval, r.finished_at, TIMESTAMPTZ '1970-01-01 00:00:00+00') AS start,
                r.state,
                (extract(epoch FROM r.finished_at - r.started_at) * 1000)::float8 AS duration_ms,
                CASE WHEN r.started_at IS NOT NULL THEN greatest(extract(epoch FROM r.started_at - r.scheduled_for) * 1000, 0)::float8 END AS lateness_ms
         FROM runs r
         WHERE r.namespace_id = $1::uuid AND r.id >= $2::uuid AND r.id <= $3::uuid
           AND r.finished_at >= $4 AND r.finished_at < $5
           AND r.state IN ('succeeded', 'failed', 'dead', 'cancelled')
           AND r.parent_run_id IS NULL
           ${filters.join('\n           ')}
       ), slots AS (
         SELECT generate_series($4::timestamptz, $5::timestamptz - interval '1 millisecond', $6::interval) AS start
       )
       SELECT s.start,
              count(*) FILTER (WHERE e.state = 'succeeded')::int AS succeeded,
              count(*) FILTER (WHERE e.state = 'failed')::int AS failed,
              count(*) FILTER (WHERE e.state = 'dead')::int AS dead,
              count(*) FILTER (WHERE e.state = 'cancelled')::int AS cancelled,
              percentile_cont(0.5) WITHIN GROUP (ORDER BY e.duration_ms) AS duration_p50_ms,
              percentile_cont(0.95) WITHIN GROUP (ORDER BY e.duration_ms) AS duration_p95_ms,
              percentile_cont(0.95) WITHIN GROUP (ORDER BY e.lateness_ms) AS lateness_p95_ms
       FROM slots s LEFT JOIN ended e ON e.start = s.start
       GROUP BY s.start
       ORDER BY s.start`,
      values,
    );
    const ms = (value: number | null) => (value === null ? null : Math.round(Number(value) * 1000) / 1000);
    return {
      buckets: rows.map((row) => ({
        start: formatInstant(row.start.getTime()),
        succeeded: row.succeeded,
        failed: row.failed,
        dead: row.dead,
        cancelled: row.cancelled,
        durationP50Ms: ms(row.duration_p50_ms),
        durationP95Ms: ms(row.duration_p95_ms),
        latenessP95Ms: ms(row.lateness_p95_ms),
      })),
    };
  }
}
