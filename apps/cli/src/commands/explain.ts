/** `kairos explain <run>`: the run, the tick that created it, and every transition in order, with reasons. */
import { NotFoundError, REASON_CODES, attemptsOf, isReasonCode } from '@kairos/domain';
import { RunRepository, ScheduleRepository, type Db } from '@kairos/ledger';
import { iso, type Output } from '../output.js';
import { namespaceId } from './namespace.js';

export async function explain(db: Db, namespace: string, runId: string, out: Output, json: boolean): Promise<number> {
  const runs = new RunRepository();
  const run = await runs.get(db, await namespaceId(db, namespace), runId);
  if (!run) throw new NotFoundError('run', runId);
  const events = await runs.events(db, runId);
  const attempts = attemptsOf(events);
  // The version of its schedule's definition the run was made from: the one in force when it was created.
  const scheduleVersion = run.scheduleId === null ? null : await new ScheduleRepository().versionAt(db, run.scheduleId, run.createdAt);
  if (json) {
    out.line(JSON.stringify({ run, scheduleVersion, attempts, events }, null, 2));
    return 0;
  }
  out.line(`run ${run.id}: ${run.state}${run.reasonCode ? ` (${run.reasonCode})` : ''}`);
  out.line(`  origin ${run.origin}${run.scheduleId ? ` of schedule ${run.scheduleId}` : ''}, slot ${iso(run.scheduledFor)}`);
  if (scheduleVersion) {
    out.line(`  made from version ${scheduleVersion.version} of the schedule (${scheduleVersion.source ? `applied by source ${scheduleVersion.source}` : `by ${scheduleVersion.actor}`})`);
  }
  out.line(`  attempt ${run.attempt} of ${run.maxAttempts}, lease epoch ${run.leaseEpoch}, crashes ${run.crashCount}`);
  if (run.reasonText) out.line(`  ${run.reasonText}`);
  for (const a of attempts) {
    const status = a.response && typeof a.response.status === 'number' ? `, HTTP ${a.response.status}` : '';
    const renewed = a.outcome === null && run.heartbeatAt ? `, lease last renewed ${iso(run.heartbeatAt)}` : '';
    out.line(`  attempt ${a.attempt} at epoch ${a.leaseEpoch} on ${a.worker}: ${a.outcome ?? 'running'}${a.reasonCode ? ` (${a.reasonCode})` : ''}${status}${renewed}`);
  }
  out.line('');
  for (const e of events) {
    const move = e.fromState || e.toState ? ` ${e.fromState ?? '·'} → ${e.toState ?? '·'}` : '';
    const why = e.reasonCode ? ` [${e.reasonCode}${isReasonCode(e.reasonCode) ? `: ${REASON_CODES[e.reasonCode]}` : ''}]` : '';
    const detail = Object.keys(e.detail).length > 0 ? ` ${JSON.stringify(e.detail)}` : '';
    out.line(`${iso(e.at)}  ${e.kind.padEnd(16)}${move}  by ${e.actor}${e.leaseEpoch ? ` at epoch ${e.leaseEpoch}` : ''}${why}${detail}`);
  }
  return 0;
}
