/**
 * POST /v1/runs/bulk: cancel or retry every run of the caller's namespace a filter matches. The
 * runs are read and acted on in pages of RUN_BULK_PAGE_SIZE, each page its own transaction, so an
 * action on 100,000 runs never holds the ledger for long. Cancel is POST /v1/runs/:id/cancel for
 * each run of a page at once; retry is POST /v1/runs/:id/retry for each, the page's fresh runs
 * inserted in one statement and handed to the transport after its commit.
 */
import { Inject, Injectable } from '@nestjs/common';
import { RETRYABLE_RUN_STATES } from '@kairos/domain';
import { readRunBulkRequest, RUN_BULK_SAMPLE_SIZE, type RunBulkAction } from '@kairos/domain/wire';
import { cancelledInTransaction, inTransaction, retryTransient, runBulkPage, RunRepository, type DatabaseClock, type Db, type RunBulkSelection, type RunRow } from '@kairos/ledger';
import { DATABASE, DATABASE_CLOCK, RunDispatcher } from '@kairos/process';
import type { CallerContext } from '../auth/request-context.js';
import { freshRunOf } from './runs.service.js';

/** Runs read and acted on per transaction. */
export const RUN_BULK_PAGE_SIZE = 500;

export interface RunBulkOutcome {
  matched: number;
  acted: number;
  sample: string[];
}

@Injectable()
export class RunsBulkService {
  constructor(
    @Inject(DATABASE) private readonly db: Db,
    @Inject(DATABASE_CLOCK) private readonly clock: DatabaseClock,
    private readonly runs: RunRepository,
    private readonly dispatcher: RunDispatcher,
  ) {}

  /**
   * Reads the body (400 naming the field of a fault: an unknown action, state or reason code, an
   * empty filter, an instant that does not parse, createdAfter not before createdBefore), then
   * pages through the matching runs oldest first. `matched` counts the runs the filter matched that
   * the action acts on; `acted` those it cancelled or retried (a run that ended or was retried
   * meanwhile is not); `sample` up to 10 of them. A dry run counts and samples and changes nothing.
   */
  async bulk(caller: CallerContext, body: unknown): Promise<RunBulkOutcome> {
    const { action, filter, dryRun } = readRunBulkRequest(body);
    // Runs created from now on (a retry's fresh runs among them) are not the filter's.
    const { rows } = await this.db.query<{ now: Date }>('SELECT clock_timestamp() AS now');
    const selection: RunBulkSelection = { namespaceId: caller.namespaceId, kind: action, ...filter, createdUpTo: rows[0]!.now };
    const outcome: RunBulkOutcome = { matched: 0, acted: 0, sample: [] };
    let afterId: string | null = null;
    for (;;) {
      const ids = await runBulkPage(this.db, selection, afterId, RUN_BULK_PAGE_SIZE);
      if (ids.length === 0) break;
      outcome.matched += ids.length;
      const acted = dryRun ? ids : await this.act(caller, action, ids);
      outcome.acted += dryRun ? 0 : acted.length;
      outcome.sample.push(...acted.slice(0, RUN_BULK_SAMPLE_SIZE - outcome.sample.length));
      if (ids.length < RUN_BULK_PAGE_SIZE) break;
      afterId = ids[ids.length - 1]!;
    }
    return outcome;
  }

  /** Acts on one page in one transaction; answers the ids acted on, in page order. */
  private async act(caller: CallerContext, action: RunBulkAction, ids: readonly string[]): Promise<string[]> {
    return action === 'cancel' ? this.cancelPage(caller, ids) : this.retryPage(caller, ids);
  }

  /** As POST /v1/runs/:id/cancel for each: queued and parked runs end now, running ones are asked to stop. */
  private async cancelPage(caller: CallerContext, ids: readonly string[]): Promise<string[]> {
    const acted = await retryTransient(() =>
      inTransaction(this.db, async (tx) => {
        const ended = await this.runs.requestCancel(tx, ids, caller.actor, 'CANCELLED_BY_USER', 'cancelled through the API (bulk)');
        const requested = await cancelledInTransaction(tx, ids);
        return new Set([...ended, ...requested]);
      }),
    );
    return ids.filter((id) => acted.has(id));
  }

  /** As POST /v1/runs/:id/retry for each: one fresh run (origin retry) of each source still retryable, inserted at once, handed over after the commit. */
  private async retryPage(caller: CallerContext, ids: readonly string[]): Promise<string[]> {
    const { sources, dispatch } = await retryTransient(() =>
      inTransaction(this.db, async (tx) => {
        const rows = (await this.runs.getMany(tx, ids)).filter((row) => row.namespaceId === caller.namespaceId && retryable(row));
        const now = this.clock.date();
        const inserted = await this.runs.insertRuns(
          tx,
          rows.map((row) => freshRunOf(row, 'retry', caller.actor, now)),
        );
        return { sources: rows.map((row) => row.id), dispatch: inserted.dispatch };
      }),
    );
    await this.dispatcher.dispatch(dispatch);
    return sources;
  }
}

/** What POST /v1/runs/:id/retry accepts: a run of its own (not a step) that ended without succeeding. */
function retryable(row: RunRow): boolean {
  return row.parentRunId === null && RETRYABLE_RUN_STATES.includes(row.state);
}
