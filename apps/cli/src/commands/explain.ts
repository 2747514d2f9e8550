/**
 * `kairos explain <run>`: the run, the tick that created it, and every transition in order, with
 * reasons. A multi-step run adds its graph, layer by layer, with each step's state, and each step's
 * own story.
 */
import { NotFoundError, REASON_CODES, attemptsOf, isReasonCode, isStepsTarget, stepLayers, stepStateOf, type StepsTarget } from '@kairos/domain';
import { RunRepository, ScheduleRepository, type Db, type RunEventRow, type RunRow } from '@kairos/ledger';
import { iso, type Output } from '../output.js';
import { namespaceId } from './namespace.js';
import { shareWords } from './share-words.js';

export async function explain(db: Db, namespace: string, runId: string, out: Output, json: boolean): Promise<number> {
  const runs = new RunRepository();
  const run = await runs.get(db, await namespaceId(db, namespace), runId);
  if (!run) throw new NotFoundError('run', runId);
  const events = await runs.events(db, runId);
  const attempts = attemptsOf(events);
  // The version of its schedule's definition the run was made from: the one in force when it was created.
  const scheduleVersion = run.scheduleId === null ? null : await new ScheduleRepository().versionAt(db, run.scheduleId, run.createdAt);
  const steps = isStepsTarget(run.target) ? await stepStories(db, runs, run) : null;
  const checkpoints = (await runs.checkpointsOf(db, [run.id])).get(run.id) ?? [];
  if (json) {
    out.line(JSON.stringify({ run, scheduleVersion, attempts, events, checkpoints, ...(steps && { steps }) }, null, 2));
    return 0;
  }
  out.line(`run ${run.id}: ${run.state}${run.reasonCode ? ` (${run.reasonCode})` : ''}`);
  out.line(`  origin ${run.origin}${run.scheduleId ? ` of schedule ${run.scheduleId}` : ''}, slot ${iso(run.scheduledFor)}`);
  if (scheduleVersion) {
    out.line(`  made from version ${scheduleVersion.version} of the schedule (${scheduleVersion.source ? `applied by source ${scheduleVersion.source}` : `by ${scheduleVersion.actor}`})`);
  }
  out.line(`  attempt ${run.attempt} of ${run.maxAttempts}, lease epoch ${run.leaseEpoch}, crashes ${run.crashCount}`);
  const share = shareWords(run.priority, run.fairnessKey === null ? null : { key: run.fairnessKey, weight: run.fairnessWeight ?? 1 });
  const waitsForTurn = run.state === 'queued' && run.heldAt !== null && run.deferReason === 'FAIR_SHARE';
  if (share !== null) out.line(`  ${share}${waitsForTurn ? ": waiting for its key's turn to enter the queue (FAIR_SHARE)" : ''}`);
  if (run.stepName) out.line(`  step ${run.stepName} of run ${run.parentRunId}`);
  if (run.reasonText) out.line(`  ${run.reasonText}`);
  for (const a of attempts) {
    const status = a.response && typeof a.response.status === 'number' ? `, HTTP ${a.response.status}` : '';
    const renewed = a.outcome === null && run.heartbeatAt ? `, lease last renewed ${iso(run.heartbeatAt)}` : '';
    out.line(`  attempt ${a.attempt} at epoch ${a.leaseEpoch} on ${a.worker}: ${a.outcome ?? 'running'}${a.reasonCode ? ` (${a.reasonCode})` : ''}${status}${renewed}`);
  }
  if (steps && isStepsTarget(run.target)) graphLines(run.target, steps, out);
  if (checkpoints.length > 0) {
    out.line('  checkpoints, in order:');
    for (const c of checkpoints) {
      const when = c.finishedAt ? `${iso(c.startedAt)} → ${iso(c.finishedAt)}` : `since ${iso(c.startedAt)}`;
      const wake = c.wakeAt ? `, ${c.kind === 'sleep' ? 'wakes' : 'times out'} ${iso(c.wakeAt)}` : '';
      out.line(`    ${c.kind.padEnd(6)} ${c.name}: ${c.state}, ${when}${wake}`);
    }
  }
  out.line('');
  for (const e of events) out.line(eventLine(e));
  for (const step of steps ?? []) {
    out.line('');
    out.line(`step ${step.run.stepName} (run ${step.run.id}): ${stepStateOf(step.run)}`);
    for (const e of step.events) out.line(`  ${eventLine(e)}`);
  }
  return 0;
}

interface StepStory {
  run: RunRow;
  events: RunEventRow[];
}

/** Each step run of a graph with its events, in the order the steps were declared. */
async function stepStories(db: Db, runs: RunRepository, graph: RunRow): Promise<StepStory[]> {
  const stepRuns = (await runs.stepsOf(db, [graph])).get(graph.id) ?? [];
  const order = isStepsTarget(graph.target) ? graph.target.steps.map((s) => s.name) : [];
  stepRuns.sort((a, b) => order.indexOf(a.stepName!) - order.indexOf(b.stepName!));
  return Promise.all(stepRuns.map(async (run) => ({ run, events: await runs.events(db, run.id) })));
}

/** The graph, one line per step, layer by layer: what it waits for, where it stands, why. */
function graphLines(graph: StepsTarget, steps: readonly StepStory[], out: Output): void {
  const byName = new Map(steps.map((s) => [s.run.stepName!, s.run]));
  const width = Math.max(...graph.steps.map((s) => s.name.length));
  out.line(`  steps, layer by layer:`);
  for (const [layer, names] of stepLayers(graph.steps).entries()) {
    for (const [i, name] of names.entries()) {
      const spec = graph.steps.find((s) => s.name === name)!;
      const run = byName.get(name);
      const after = spec.dependsOn.length > 0 ? `after ${spec.dependsOn.join(', ')}${spec.when === 'always' ? ' (always)' : ''}` : 'first';
      const state = run ? stepStateOf(run) : 'waiting';
      const why = run?.reasonCode && run.reasonCode !== 'SUCCEEDED' ? ` ${run.reasonCode}${run.reasonText ? `: ${run.reasonText}` : ''}` : '';
      const took = run?.startedAt && run.finishedAt ? `, ${run.finishedAt.getTime() - run.startedAt.getTime()} ms` : '';
      const attempts = run ? `, attempt ${run.attempt}/${run.maxAttempts}` : '';
      out.line(`    ${i === 0 ? `${layer + 1}.` : '  '} ${name.padEnd(width)}  ${state.padEnd(9)} ${after}${attempts}${took}${why}`);
    }
  }
}

function eventLine(e: RunEventRow): string {
  const move = e.fromState || e.toState ? ` ${e.fromState ?? '·'} → ${e.toState ?? '·'}` : '';
  const why = e.reasonCode ? ` [${e.reasonCode}${isReasonCode(e.reasonCode) ? `: ${REASON_CODES[e.reasonCode]}` : ''}]` : '';
  const detail = e.kind === 'event_gathered' ? ` ${gatheredWords(e.detail)}` : Object.keys(e.detail).length > 0 ? ` ${JSON.stringify(e.detail)}` : '';
  return `${iso(e.at)}  ${e.kind.padEnd(16)}${move}  by ${e.actor}${e.leaseEpoch ? ` at epoch ${e.leaseEpoch}` : ''}${why}${detail}`;
}

/** An event a debounce or batch window gathered into the run, in words. */
function gatheredWords(detail: Record<string, unknown>): string {
  const id = typeof detail.eventId === 'string' ? `event ${detail.eventId}` : 'an event';
  if (detail.control === 'batch') return `gathered ${id} into its batch`;
  if (detail.control === 'debounce') return `gathered ${id} by its debounce (the run now carries it, the last event)`;
  return `gathered ${id}`;
}
