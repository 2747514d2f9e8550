/** `kairos schedules` and `kairos runs`: the newest rows, as a table or JSON. */
import { RUN_STATES, SCHEDULE_STATUSES, ValidationError, isUuid, type RunState, type ScheduleStatus } from '@kairos/domain';
import { RunRepository, ScheduleRepository, type Db } from '@kairos/ledger';
import { iso, table, type Output } from '../output.js';
import { namespaceId } from './namespace.js';

export async function listSchedules(db: Db, out: Output, opts: { namespace: string; status?: string; limit: number; json: boolean }): Promise<number> {
  if (opts.status !== undefined && !(SCHEDULE_STATUSES as readonly string[]).includes(opts.status)) {
    throw new ValidationError('VALIDATION_FAILED', 'status', `--status must be one of ${SCHEDULE_STATUSES.join(', ')}`);
  }
  const page = await new ScheduleRepository().list(db, await namespaceId(db, opts.namespace), { status: opts.status as ScheduleStatus | undefined }, opts.limit);
  if (opts.json) {
    out.line(JSON.stringify(page.items, null, 2));
    return 0;
  }
  out.line(
    table(
      ['id', 'name', 'when', 'status', 'next fire', 'fired'],
      page.items.map((s) => [s.id, s.name, s.cron ?? (s.everyMs !== null ? `every ${s.everyMs}ms` : `at ${iso(s.at)}`), s.status, iso(s.nextFireAt), String(s.fireCount)]),
    ),
  );
  return 0;
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
