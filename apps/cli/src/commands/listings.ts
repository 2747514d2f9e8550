/** `kairos schedules` and `kairos runs`: the newest rows, as a table or JSON. */
import {
  RUN_STATES,
  SCHEDULE_STATUSES,
  ValidationError,
  explainDstPolicy,
  isUuid,
  parseCron,
  summarizeDstPolicy,
  type DstExplanation,
  type RunState,
  type ScheduleStatus,
} from '@kairos/domain';
import { RunRepository, ScheduleRepository, type Db, type ScheduleRow } from '@kairos/ledger';
import { iso, table, type Output } from '../output.js';
import { namespaceId } from './namespace.js';
import { shareWords } from './share-words.js';

export async function listSchedules(db: Db, out: Output, opts: { namespace: string; status?: string; limit: number; json: boolean }): Promise<number> {
  if (opts.status !== undefined && !(SCHEDULE_STATUSES as readonly string[]).includes(opts.status)) {
    throw new ValidationError('VALIDATION_FAILED', 'status', `--status must be one of ${SCHEDULE_STATUSES.join(', ')}`);
  }
  const page = await new ScheduleRepository().list(db, await namespaceId(db, opts.namespace), { status: opts.status as ScheduleStatus | undefined }, opts.limit);
  if (opts.json) {
    out.line(JSON.stringify(page.items.map((s) => ({ ...s, dst: dstOf(s) })), null, 2));
    return 0;
  }
  out.line(
    table(
      ['id', 'name', 'when', 'status', 'next fire', 'fired', 'dst'],
      page.items.map((s) => {
        const dst = dstOf(s);
        return [
          s.id,
          s.name,
          s.cron ?? (s.everyMs !== null ? `every ${s.everyMs}ms` : `at ${iso(s.at)}`),
          s.status,
          iso(s.nextFireAt),
          String(s.fireCount),
          dst.resolved === null ? '-' : summarizeDstPolicy(dst, dst.resolved),
        ];
      }),
    ),
  );
  // Under the table, the schedules whose runs do not share their queues the default way.
  const shares = page.items.flatMap((s) => {
    const share = shareWords(s.priority, s.fairness);
    return share === null ? [] : [`${s.name}: ${share}`];
  });
  if (shares.length > 0) out.line(['', 'runs made with a priority or a fairness key:', ...shares.map((line) => `  ${line}`)].join('\n'));
  return 0;
}

/** The stored DST policy and what it means for the schedule's cron expression, as the API shows it. */
function dstOf(s: ScheduleRow): DstExplanation {
  return explainDstPolicy(s.cron === null ? null : parseCron(s.cron), { gap: s.dstGap, overlap: s.dstOverlap });
}

export async function listRuns(
  db: Db,
  out: Output,
  opts: { namespace: string; scheduleId?: string; state?: string; limit: number; json: boolean },
): Promise<number> {
  if (opts.state !== undefined && !(RUN_STATES as readonly string[]).includes(opts.state)) {
    throw new ValidationError('VALIDATION_FAILED', 'state', `--state must be one of ${RUN_STATES.join(', ')}`);
  }
  if (opts.scheduleId !== undefined && !isUuid(opts.scheduleId)) {
    throw new ValidationError('VALIDATION_FAILED', 'schedule', '--schedule must be a schedule id (a UUID)');
  }
  const page = await new RunRepository().list(
    db,
    await namespaceId(db, opts.namespace),
    { scheduleId: opts.scheduleId, state: opts.state as RunState | undefined },
    opts.limit,
  );
  if (opts.json) {
    out.line(JSON.stringify(page.items, null, 2));
    return 0;
  }
  out.line(
    table(
      ['id', 'schedule', 'origin', 'slot', 'state', 'attempt', 'reason'],
      page.items.map((r) => [r.id, r.scheduleId ?? '-', r.origin, iso(r.scheduledFor), r.state, `${r.attempt}/${r.maxAttempts}`, r.reasonCode ?? '-']),
    ),
  );
  return 0;
}
