/**
 * The scheduleRuns(scheduleId) subscription: a schedule's newest runs, then each run that appears
 * or changes state, so a page shows new runs without reloading. Like runEvents it reads the ledger
 * (a poll of the schedule's newest runs), so it needs no pub/sub and survives restarts in between.
 */
import { Args, ID, Resolver, Subscription } from '@nestjs/graphql';
import { RunType } from '../runs/run.types.js';
import { Caller, type CallerContext } from '../auth/request-context.js';
import type { RunView } from '../runs/run.view.js';
import { RunsService } from '../runs/runs.service.js';
import { SchedulesService } from './schedules.service.js';

export const SCHEDULE_RUNS_POLL_MS = 500;
/** How many of the newest runs each poll compares; a schedule creating more between two polls shows the newest. */
const WATCHED_RUNS = 20;

@Resolver(() => RunType)
export class ScheduleRunsResolver {
  constructor(
    private readonly runs: RunsService,
    private readonly schedules: SchedulesService,
  ) {}

  @Subscription(() => RunType, {
    description: "The schedule's newest runs, then each run of it that is created or changes state.",
    resolve: (run: RunView) => run,
  })
  async scheduleRuns(@Caller() caller: CallerContext, @Args('scheduleId', { type: () => ID }) scheduleId: string) {
    await this.schedules.get(caller, scheduleId);
    return changedRuns(() => this.runs.list(caller, { scheduleId }, WATCHED_RUNS).then((page) => page.items));
  }
}

/**
 * Yields each run whose state (or attempt) differs from what was last yielded for it, oldest first.
 * An iterator rather than a generator: a generator told to return while it sleeps between polls
 * would only stop at its next yield, which never comes for a quiet schedule.
 */
function changedRuns(poll: () => Promise<RunView[]>): AsyncIterableIterator<RunView> {
  const seen = new Map<string, string>();
  const pending: RunView[] = [];
  let closed = false;
  let wake: (() => void) | null = null;
  const close = (): IteratorResult<RunView> => {
    closed = true;
    wake?.();
    return { done: true, value: undefined };
  };
  return {
    async next(): Promise<IteratorResult<RunView>> {
      let first = pending.length === 0 && seen.size === 0;
      while (!closed && pending.length === 0) {
        if (!first) await new Promise<void>((resolve) => {
          wake = resolve;
          setTimeout(resolve, SCHEDULE_RUNS_POLL_MS);
        });
        first = false;
        if (closed) break;
        let runs: RunView[];
        try {
          runs = await poll();
        } catch {
          return close();
        }
        for (const run of [...runs].reverse()) {
          const key = `${run.state}:${run.attempt}`;
          if (seen.get(run.id) === key) continue;
          seen.set(run.id, key);
          pending.push(run);
        }
      }
      const run = pending.shift();
      return run === undefined ? close() : { done: false, value: run };
    },
    async return(): Promise<IteratorResult<RunView>> {
      return close();
    },
    [Symbol.asyncIterator]() {
      return this;
    },
  };
}
