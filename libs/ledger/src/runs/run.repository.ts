/**
 * Runs as the API reads and creates them: lookups, listings, event histories, the active runs an
 * overlap decision reads, inserts and cancellation requests. Every state change is recorded in the
 * statement or transaction that makes it: a plain creation on the run row, the rest as run_events rows.
 */
import { ACTIVE_RUN_STATES, DEFAULT_PRIORITY, formatInstant, isStepsTarget, isUuid, keptSteps, storableText, type ActiveRun, type CheckpointKind, type CheckpointState, type DispatchItem, type JsonValue, type ReasonCode, type RunState } from '@kairos/domain';
import { traceContextOf } from '@kairos/telemetry/trace-context';
import { inTransaction, jsonText, jsonbText, type Db, type Queryable, type Tx } from '../database.js';
import { decodeCursor, toPage, type Page } from '../pagination.js';
import { RUN_COLUMNS, dispatchItemOf, stepRunsOf, type NewRun, type RunEventRow, type RunRow } from './run-row.js';
import { INSERT_RUNS_SQL, runStorySql } from './run-sql.js';
import { targetQueueSql } from './target-queue.js';

const INFINITY = 'infinity';

export interface RunFilter {
  scheduleId?: string;
  state?: RunState;
}

export class RunRepository {
  async get(db: Queryable, namespaceId: string, id: string): Promise<RunRow | null> {
    if (!isUuid(id)) return null;
    const { rows } = await db.query<RunRow>(`SELECT ${RUN_COLUMNS} FROM runs r WHERE r.namespace_id = $1 AND r.id = $2`, [
      namespaceId,
      id,
    ]);
    return rows[0] ?? null;
  }

  /** The runs with these ids, in the order given. */
  async getMany(db: Queryable, ids: readonly string[]): Promise<RunRow[]> {
    if (ids.length === 0) return [];
    const { rows } = await db.query<RunRow>(`SELECT ${RUN_COLUMNS} FROM runs r WHERE r.id = ANY($1::uuid[])`, [ids]);
    const byId = new Map(rows.map((r) => [r.id, r]));
    return ids.map((id) => byId.get(id)!);
  }

  /** The runs that first used these idempotency keys, by key, each with the hash of the request that created it. */
  private async findByIdempotencyKeys(db: Queryable, namespaceId: string, keys: readonly string[]): Promise<Map<string, RunRow & { requestHash: string | null }>> {
    if (keys.length === 0) return new Map();
    const { rows } = await db.query<RunRow & { requestHash: string | null }>(
      `SELECT ${RUN_COLUMNS}, r.request_hash AS "requestHash" FROM runs r WHERE r.namespace_id = $1 AND r.idempotency_key = ANY($2::text[])`,
      [namespaceId, keys],
    );
    return new Map(rows.map((r) => [r.idempotencyKey!, r]));
  }

  /** Newest first, keyset-paginated on id. */
  async list(db: Queryable, namespaceId: string, filter: RunFilter, limit: number, cursor?: string): Promise<Page<RunRow>> {
    const params: unknown[] = [namespaceId, limit + 1];
    // A step run is seen through its graph's run (its `steps`), not as a run of its own.
    const where = ['r.namespace_id = $1', 'r.parent_run_id IS NULL'];
    if (cursor !== undefined) {
      params.push(decodeCursor(cursor, isUuid));
      where.push(`r.id < $${params.length}`);
    }
    if (filter.scheduleId !== undefined) {
      params.push(filter.scheduleId);
      where.push(`r.schedule_id = $${params.length}`);
    }
    if (filter.state !== undefined) {
      params.push(filter.state);
      where.push(`r.state = $${params.length}`);
    }
    const { rows } = await db.query<RunRow>(
      `SELECT ${RUN_COLUMNS} FROM runs r WHERE ${where.join(' AND ')} ORDER BY r.id DESC LIMIT $2`,
      params,
    );
    return toPage(rows, limit, (r) => r.id);
  }

  /**
   * A run's transition history, oldest first: the backbone of explain. The transitions recorded on
   * the run row and its run_events rows, as one story. `afterId` skips the events a follower has
   * already seen.
   */
  async events(db: Queryable, runId: string, afterId = 0): Promise<RunEventRow[]> {
    const { rows } = await db.query<RunEventRow>(
      `SELECT id, at, kind, from_state AS "fromState", to_state AS "toState", lease_epoch AS "leaseEpoch", actor,
              reason_code AS "reasonCode", detail
       FROM (${runStorySql('$1::uuid')}) story WHERE id > $2 ORDER BY id`,
      [runId, afterId],
    );
    return rows;
  }

  /** Every queued run of a schedule, parked ones included. */
  async queuedIdsOfSchedule(tx: Queryable, scheduleId: string): Promise<string[]> {
    const { rows } = await tx.query<{ id: string }>(`SELECT id FROM runs WHERE schedule_id = $1 AND state = 'queued'`, [scheduleId]);
    return rows.map((r) => r.id);
  }

  /** The queued runs the tick made ahead of a slot that is not due yet (parked ones included). */
  async aheadIdsOfSchedule(tx: Queryable, scheduleId: string): Promise<string[]> {
    const { rows } = await tx.query<{ id: string }>(
      `SELECT id FROM runs WHERE schedule_id = $1 AND origin = 'schedule' AND state = 'queued' AND scheduled_for > now()`,
      [scheduleId],
    );
    return rows.map((r) => r.id);
  }

  /** The active runs of each schedule (queued, running or parked), oldest slot first: the input of overlap decisions. */
  async activeBySchedule(tx: Queryable, scheduleIds: readonly string[]): Promise<Map<string, ActiveRun[]>> {
    const active = new Map<string, ActiveRun[]>();
    if (scheduleIds.length === 0) return active;
    const { rows } = await tx.query<ActiveRun & { scheduleId: string }>(
      `SELECT schedule_id AS "scheduleId", id, state, available_at = 'infinity' AS buffered FROM runs
       WHERE schedule_id = ANY($1::uuid[]) AND state IN ('queued', 'running', 'sleeping', 'waiting')
       ORDER BY scheduled_for, id`,
      [scheduleIds],
    );
    for (const { scheduleId, ...run } of rows) {
      const list = active.get(scheduleId) ?? [];
      list.push(run);
      active.set(scheduleId, list);
    }
    return active;
  }

  /**
   * Records a cancellation request durably. The first request stands. Queued and parked (sleeping,
   * waiting) runs are cancelled at once (in the same transaction); running ones are stopped by their holder, which sees the
   * request on its next lease renewal. A graph's run is cancelled through its steps: the waiting
   * ones are skipped, the queued ones cancelled, the running ones asked to stop, and the graph's
   * run ends cancelled with its last active step. Returns the ids that ended here.
   */
  async requestCancel(tx: Tx, ids: readonly string[], actor: string, reasonCode: ReasonCode, reasonText: string): Promise<string[]> {
    if (ids.length === 0) return [];
    const { rows: graphs } = await tx.query<{ id: string }>(
      `SELECT id FROM runs WHERE id = ANY($1::uuid[]) AND target->>'type' = 'steps' AND state IN ('queued', 'running')`,
      [ids],
    );
    if (graphs.length === 0) return this.cancelRuns(tx, ids, actor, reasonCode, reasonText);
    const graphIds = graphs.map((g) => g.id);
    // Steps first, then their graphs: the order a step's verdict takes its locks in.
    const { rows: steps } = await tx.query<{ id: string }>(
      `SELECT id FROM runs WHERE parent_run_id = ANY($1::uuid[]) AND state IN ('queued', 'running', 'sleeping', 'waiting') ORDER BY id FOR NO KEY UPDATE`,
      [graphIds],
    );
    await tx.query(
      `WITH requested AS (
         UPDATE runs SET cancel_requested_at = coalesce(cancel_requested_at, now()),
                cancel_requested_by = coalesce(cancel_requested_by, $2), updated_at = now()
         WHERE id = ANY($1::uuid[])
         RETURNING id, lease_epoch
       )
       INSERT INTO run_events (run_id, kind, lease_epoch, actor, reason_code, detail)
       SELECT id, 'cancel_requested', lease_epoch, $2, $3, jsonb_build_object('reasonText', $4::text) FROM requested`,
      [graphIds, actor, reasonCode, reasonText],
    );
    const graphSet = new Set(graphIds);
    const ended = await this.cancelRuns(tx, [...ids.filter((id) => !graphSet.has(id)), ...steps.map((s) => s.id)], actor, reasonCode, reasonText);
    const { rows: endedGraphs } = await tx.query<{ id: string }>(`SELECT id FROM runs WHERE id = ANY($1::uuid[]) AND state = 'cancelled'`, [graphIds]);
    const stepSet = new Set(steps.map((s) => s.id));
    return [...ended.filter((id) => !stepSet.has(id)), ...endedGraphs.map((g) => g.id)];
  }

  private async cancelRuns(tx: Tx, ids: readonly string[], actor: string, reasonCode: ReasonCode, reasonText: string): Promise<string[]> {
    if (ids.length === 0) return [];
    const { rows } = await tx.query<{ id: string }>(
      `WITH requested AS (
         UPDATE runs SET cancel_requested_at = coalesce(cancel_requested_at, now()),
                cancel_requested_by = coalesce(cancel_requested_by, $2), updated_at = now(),
                state = CASE WHEN state = 'running' THEN state ELSE 'cancelled' END,
                reason_code = CASE WHEN state = 'running' THEN reason_code ELSE $3 END,
                reason_text = CASE WHEN state = 'running' THEN reason_text ELSE $4 END,
                finished_at = CASE WHEN state = 'running' THEN finished_at ELSE now() END
         FROM (SELECT id AS before_id, state AS before FROM runs WHERE id = ANY($1::uuid[]) AND state IN ('queued', 'running', 'sleeping', 'waiting') FOR NO KEY UPDATE) b
         WHERE id = b.before_id AND state IN ('queued', 'running', 'sleeping', 'waiting')
         RETURNING id, state, b.before, lease_epoch, available_at = 'infinity' AND parent_run_id IS NOT NULL AS skipped
       ), unwaited AS (
         -- A run that waited for an event (ctx.waitForEvent) no longer does.
         DELETE FROM event_waits w USING requested q WHERE w.run_id = q.id AND q.state = 'cancelled'
       ), events AS (
         INSERT INTO run_events (run_id, kind, from_state, to_state, lease_epoch, actor, reason_code, detail)
         SELECT id, 'cancel_requested', NULL, NULL, lease_epoch, $2, $3, jsonb_build_object('reasonText', $4::text) FROM requested
         UNION ALL
         SELECT id, CASE WHEN skipped THEN 'skipped' ELSE 'cancelled' END, before, 'cancelled', lease_epoch, $2, $3, '{}'::jsonb
         FROM requested WHERE state = 'cancelled'
       )
       SELECT id FROM requested WHERE state = 'cancelled'`,
      [ids, actor, reasonCode, reasonText],
    );
    return rows.map((r) => r.id);
  }

  /**
   * Inserts runs. A plain creation is recorded on the row itself (created_event_id, created_by);
   * one with a reason (a run parked by its overlap policy) or more to say appends its `queued`
   * event. The caller's transaction decides overlap first. Runs
   * that are due (not parked) are marked enqueued: the caller hands them to the transport right
   * after the commit, resets the mark if the transport refuses (the relay then retries), and if it
   * crashes in between the reconciler finds the run overdue with no job and re-creates it.
   *
   * A graph's run is inserted with its step runs, parked; the steps ready at once (its first ones,
   * unless the graph itself is parked) are released, marked enqueued and answered as `readySteps`,
   * for the caller to hand over with the rest. The graph's own run never goes to the transport.
   */
  async insertRuns(tx: Queryable, runs: readonly NewRun[]): Promise<InsertedRuns> {
    if (runs.length === 0) return { inserted: new Set(), readySteps: [], dispatch: [] };
    const { inserted, fair } = await this.insertRows(tx, runs);
    const held = await this.holdWithoutPlace(tx, runs.filter((r) => inserted.has(r.id) && r.concurrency));
    const entered = await this.enterFairShare(tx, runs.filter((r) => fair.has(r.id) && !held.has(r.id) && dispatchItemOf(r)));
    const handedOver = [
      ...runs.flatMap((r) => (inserted.has(r.id) && !held.has(r.id) && !entered.joined.has(r.id) && dispatchItemOf(r)) || []),
      ...entered.letIn,
    ];
    const graphs = runs.filter((r) => inserted.has(r.id) && isStepsTarget(r.target));
    if (graphs.length === 0) return { inserted, readySteps: [], dispatch: handedOver };
    await this.insertRows(tx, graphs.flatMap(stepRunsOf));
    await this.keepSucceededSteps(tx, graphs.filter((g) => g.sourceRunId !== null && (g.origin === 'retry' || g.origin === 'republish')));
    const graphIds = graphs.map((g) => g.id);
    await tx.query(`SELECT kairos_advance_graph(id) FROM unnest($1::uuid[]) AS g(id)`, [graphIds]);
    const readySteps = await this.takeReadySteps(tx, graphIds);
    return { inserted, readySteps, dispatch: [...handedOver, ...readySteps] };
  }

  /**
   * Runs just written whose concurrency key has no place for them, held at once (kairos_hold_new)
   * rather than handed to the transport, whose claims would only be refused; a freed place releases them.
   */
  private async holdWithoutPlace(tx: Queryable, runs: readonly NewRun[]): Promise<Set<string>> {
    if (runs.length === 0) return new Set();
    const { rows } = await tx.query<{ id: string }>(`SELECT id FROM kairos_hold_new($1::uuid[])`, [runs.map((r) => r.id)]);
    return new Set(rows.map((r) => r.id));
  }

  /**
   * Runs just written through their queue's fair-share window (kairos_fair_enter): the runs that
   * joined its backlog, and those let in now (new or older), marked enqueued, to hand over.
   */
  private async enterFairShare(tx: Queryable, runs: readonly NewRun[]): Promise<{ joined: Set<string>; letIn: DispatchItem[] }> {
    if (runs.length === 0) return { joined: new Set(), letIn: [] };
    const { rows } = await tx.query<DispatchItem & { joined: boolean }>(`SELECT * FROM kairos_fair_enter($1::uuid[])`, [runs.map((r) => r.id)]);
    return {
      joined: new Set(rows.filter((r) => r.joined).map((r) => r.id)),
      letIn: rows.filter((r) => !r.joined).map(({ joined: _, ...item }) => item),
    };
  }

  /**
   * A graph run again keeps the steps its source run succeeded in whose upstream steps are all kept
   * (keptSteps): each ends succeeded at once with the source step's result, recorded as an event
   * naming where it came from. The rest run again.
   */
  private async keepSucceededSteps(tx: Queryable, reruns: readonly NewRun[]): Promise<void> {
    for (const graph of reruns) {
      if (!isStepsTarget(graph.target)) continue;
      const { rows } = await tx.query<{ stepName: string }>(
        `SELECT step_name AS "stepName" FROM runs WHERE parent_run_id = $1 AND state = 'succeeded'`,
        [graph.sourceRunId],
      );
      const kept = keptSteps(graph.target.steps, new Set(rows.map((r) => r.stepName)));
      if (kept.size === 0) continue;
      await tx.query(
        `WITH kept AS (
           UPDATE runs c SET state = 'succeeded', result = s.result, reason_code = s.reason_code, reason_text = s.reason_text,
                  attempt = s.attempt, available_at = s.available_at, started_at = s.started_at, finished_at = s.finished_at,
                  updated_at = now()
           FROM runs s
           WHERE c.parent_run_id = $1 AND c.step_name = ANY($3::text[]) AND s.parent_run_id = $2 AND s.step_name = c.step_name
           RETURNING c.id, c.lease_epoch, s.id AS source_id
         )
         INSERT INTO run_events (run_id, kind, from_state, to_state, lease_epoch, actor, reason_code, detail)
         SELECT k.id, 'succeeded', 'queued', 'succeeded', k.lease_epoch, $4, 'SUCCEEDED', jsonb_build_object('keptFrom', k.source_id) FROM kept k`,
        [graph.id, graph.sourceRunId, [...kept], storableText(graph.actor)],
      );
    }
  }

  /** The ready steps of these graphs not yet handed to the transport, marked handed over (the caller hands them over after its commit). */
  async takeReadySteps(tx: Queryable, graphIds: readonly string[]): Promise<DispatchItem[]> {
    if (graphIds.length === 0) return [];
    const { rows } = await tx.query<DispatchItem>(`SELECT * FROM kairos_worker.take_ready_steps($1::uuid[])`, [graphIds]);
    return rows;
  }

  /**
   * Inserts the rows; answers the runs inserted, and of them those through their queue's fair-share
   * window (fair): runs with a fairness key, and runs without one while their queue has runs waiting.
   */
  private async insertRows(tx: Queryable, runs: readonly NewRun[]): Promise<{ inserted: Set<string>; fair: Set<string> }> {
    // The span creating the runs (a tick, an API request) is their trace: the worker continues it.
    const trace = traceContextOf();
    const { rows } = await tx.query<{ id: string; fair: boolean }>({
      name: 'kairos.runs.insert',
      text: INSERT_RUNS_SQL,
      values: [
        JSON.stringify(
          runs.map((r) => ({
            id: r.id,
            ns: r.namespaceId,
            sched: r.scheduleId,
            origin: r.origin,
            src: r.sourceRunId,
            slot: r.scheduledFor,
            avail: r.availableAt ?? INFINITY,
            defer: r.deferReason && storableText(r.deferReason),
            excl: r.exclusive,
            maxa: r.maxAttempts,
            tgt: jsonbText(r.target),
            pl: jsonText(r.payload),
            rt: jsonbText(r.retry),
            tmo: r.timeoutMs,
            ikey: r.idempotencyKey && storableText(r.idempotencyKey),
            rh: r.requestHash ?? null,
            actor: createdOnRow(r) ? storableText(r.actor) : null,
            par: r.parentRunId ?? null,
            step: r.stepName ?? null,
            ckey: r.concurrency ? storableText(r.concurrency.key) : null,
            clim: r.concurrency?.limit ?? null,
            sensor: r.sensorId ?? null,
            rkey: r.runKey ?? null,
            evt: r.eventId ?? null,
            thr: r.throttle ?? null,
            prio: r.priority ?? DEFAULT_PRIORITY,
            fkey: r.fairness ? storableText(r.fairness.key) : null,
            fweight: r.fairness?.weight ?? null,
          })),
        ),
        trace.traceParent,
        trace.traceState,
      ],
    });
    const inserted = new Set(rows.map((r) => r.id));
    const fair = new Set(rows.filter((r) => r.fair).map((r) => r.id));
    const withEvent = runs.filter((r) => inserted.has(r.id) && !createdOnRow(r));
    if (withEvent.length === 0) return { inserted, fair };
    await tx.query({
      name: 'kairos.runs.insert-events',
      text: `INSERT INTO run_events (run_id, kind, to_state, lease_epoch, actor, reason_code, detail)
       SELECT id, 'queued', 'queued', 0, actor, reason, detail::jsonb
       FROM json_to_recordset($1::json) AS t(id uuid, actor text, reason text, detail text)`,
      values: [
        JSON.stringify(
          withEvent.map((r) => ({
            id: r.id,
            actor: storableText(r.actor),
            reason: r.reasonCode,
            detail: jsonbText({ origin: r.origin, scheduledFor: formatInstant(r.scheduledFor), ...r.detail }),
          })),
        ),
      ],
    });
    return { inserted, fair };
  }

  /**
   * Creates runs of one namespace in one transaction and returns each as written, in order, with the
   * hash of the API request that created it. A run whose idempotency key the namespace has already
   * used (before, or by an earlier run of the same call) is not created: its answer is the run that
   * first used the key, with `deduped: true` and the hash of that first request (the unique index
   * decides, not a read), so the caller can tell a replay from a conflicting reuse.
   */
  async createMany(db: Db, runs: readonly NewRun[]): Promise<{ created: CreatedRun[]; dispatch: DispatchItem[] }> {
    if (runs.length === 0) return { created: [], dispatch: [] };
    return inTransaction(db, async (tx) => {
      const { inserted, dispatch } = await this.insertRuns(tx, runs);
      const rows = await this.getMany(tx, runs.filter((r) => inserted.has(r.id)).map((r) => r.id));
      const created = new Map(rows.map((r) => [r.id, r]));
      const repeated = runs.filter((r) => !inserted.has(r.id)).map((r) => r.idempotencyKey!);
      const firsts = await this.findByIdempotencyKeys(tx, runs[0]!.namespaceId, repeated);
      const answers = runs.map((run): CreatedRun => {
        const row = created.get(run.id);
        if (row) return { row, deduped: false, requestHash: run.requestHash ?? null };
        const { requestHash, ...first } = firsts.get(run.idempotencyKey!)!;
        return { row: first, deduped: true, requestHash };
      });
      return { created: answers, dispatch };
    });
  }

  /** The checkpoints of these runs (their durable functions' steps, sleeps and signals), by run, in the order they began. */
  async checkpointsOf(db: Queryable, runIds: readonly string[]): Promise<Map<string, CheckpointRow[]>> {
    const byRun = new Map<string, CheckpointRow[]>();
    if (runIds.length === 0) return byRun;
    const { rows } = await db.query<CheckpointRow & { runId: string }>(
      `SELECT run_id AS "runId", name, kind, state, result, started_at AS "startedAt", finished_at AS "finishedAt", wake_at AS "wakeAt"
       FROM run_checkpoints WHERE run_id = ANY($1::uuid[])
         -- The marker a failed step leaves for replays (the SDK's FAILED_PREFIX) is no checkpoint of the run's story.
         AND name NOT LIKE 'failed:%'
       -- A step's start is the worker's reading of the clock, to the millisecond: checkpoints begun
       -- in one millisecond go in the order they were stored (finished; a park last).
       ORDER BY started_at, finished_at NULLS LAST, name`,
      [runIds],
    );
    for (const { runId, ...row } of rows) byRun.set(runId, [...(byRun.get(runId) ?? []), row]);
    return byRun;
  }

  /**
   * Sends signal `name` with `body` to run `runId` of the namespace: kept until the run asks for
   * it, or delivered at once to a run waiting for it, which is then queued again and due now (the
   * caller hands it to the transport after the commit). Each name is sent once per run: a second
   * send is refused whatever the run's state, a first one to a run that ended too.
   */
  async sendSignal(tx: Tx, namespaceId: string, runId: string, name: string, body: unknown, actor: string): Promise<SignalSent> {
    if (!isUuid(runId)) return { kind: 'not_found' };
    const { rows: locked } = await tx.query<{ state: RunState }>(`SELECT state FROM runs WHERE namespace_id = $1 AND id = $2 FOR NO KEY UPDATE`, [
      namespaceId,
      runId,
    ]);
    if (locked.length === 0) return { kind: 'not_found' };
    const { rowCount: sent } = await tx.query(`SELECT 1 FROM run_signals WHERE run_id = $1 AND name = $2`, [runId, name]);
    if (sent !== 0) return { kind: 'already_sent' };
    if (!ACTIVE_RUN_STATES.includes(locked[0]!.state)) return { kind: 'ended', state: locked[0]!.state };
    const { rowCount } = await tx.query(
      `INSERT INTO run_signals (run_id, name, body, sent_by) VALUES ($1, $2, $3::json, $4) ON CONFLICT (run_id, name) DO NOTHING`,
      [runId, storableText(name), jsonText(body) ?? 'null', storableText(actor)],
    );
    if (rowCount === 0) return { kind: 'already_sent' };
    const { rows } = await tx.query<DispatchItem>(
      `WITH woken AS (
         UPDATE runs r SET state = 'queued', available_at = now(), enqueued_at = now(), updated_at = now()
         WHERE r.id = $1 AND r.state = 'waiting'
           AND EXISTS (SELECT 1 FROM run_checkpoints c WHERE c.run_id = r.id AND c.name = 'signal:' || $2 AND c.state = 'waiting')
         RETURNING r.id, r.available_at, r.lease_epoch, ${targetQueueSql('r')} AS queue
       ), event AS (
         INSERT INTO run_events (run_id, kind, from_state, to_state, lease_epoch, actor, detail)
         SELECT id, 'signalled', 'waiting', 'queued', lease_epoch, $3, jsonb_build_object('signal', $2::text) FROM woken
       )
       SELECT id, available_at AS "availableAt", queue FROM woken`,
      [runId, name, storableText(actor)],
    );
    return { kind: 'sent', woken: rows[0] ?? null };
  }

  /** The step runs of these graphs' runs, by graph, each graph's in the order of its declaration. */
  async stepsOf(db: Queryable, graphs: readonly Pick<RunRow, 'id' | 'target'>[]): Promise<Map<string, RunRow[]>> {
    const ids = graphs.filter((g) => isStepsTarget(g.target)).map((g) => g.id);
    const byGraph = new Map<string, RunRow[]>();
    if (ids.length === 0) return byGraph;
    const { rows } = await db.query<RunRow>(`SELECT ${RUN_COLUMNS} FROM runs r WHERE r.parent_run_id = ANY($1::uuid[])`, [ids]);
    for (const row of rows) byGraph.set(row.parentRunId!, [...(byGraph.get(row.parentRunId!) ?? []), row]);
    return byGraph;
  }

  /**
   * Moves run `runId` of the namespace to `version` (null: a worker of any version may take it):
   * its later attempts and resumes go to that version's workers. The move is a `version_moved`
   * event; a run held for its old version is released when a live worker serves the new one (the
   * relay hands it over, woken by the release). Refused for a run that ended.
   */
  async moveVersion(db: Queryable, namespaceId: string, runId: string, version: string | null, actor: string): Promise<VersionMove> {
    if (!isUuid(runId)) return { kind: 'not_found' };
    const { rows } = await db.query<{ outcome: 'moved' | 'ended'; state: RunState; from: string | null; to: string | null; released: boolean }>(
      `SELECT * FROM kairos_move_run_version($1, $2, $3, $4)`,
      [namespaceId, runId, version === null ? null : storableText(version), storableText(actor)],
    );
    const row = rows[0];
    if (!row) return { kind: 'not_found' };
    if (row.outcome === 'ended') return { kind: 'ended', state: row.state };
    return { kind: 'moved', from: row.from, to: row.to, released: row.released };
  }
}

/** A checkpoint of a durable function, as the run view shows it. */
export interface CheckpointRow {
  name: string;
  kind: CheckpointKind;
  state: CheckpointState;
  result: JsonValue | null;
  startedAt: Date;
  finishedAt: Date | null;
  wakeAt: Date | null;
}

/** What became of a signal sent: the run waited for it (woken, to hand to the transport) or it was kept; or why nothing was sent. */
export type SignalSent = { kind: 'sent'; woken: DispatchItem | null } | { kind: 'already_sent' } | { kind: 'ended'; state: RunState } | { kind: 'not_found' };

/** What became of a move to another version: moved (and released when it waited for its version), or why not. */
export type VersionMove =
  | { kind: 'moved'; from: string | null; to: string | null; released: boolean }
  | { kind: 'ended'; state: RunState }
  | { kind: 'not_found' };

/** What insertRuns wrote: the ids inserted (a repeated idempotency key inserts nothing) and the steps ready to hand over. */
export interface InsertedRuns {
  inserted: Set<string>;
  readySteps: DispatchItem[];
  /** What to hand the transport once the transaction commits: the due runs no limit held, and the ready steps. */
  dispatch: DispatchItem[];
}

/** A run as createMany answers for it: created, or the run that first used its idempotency key. */
export interface CreatedRun {
  row: RunRow;
  deduped: boolean;
  requestHash: string | null;
}

/**
 * True when the run's creation is recorded on its row: the row's own columns then say all its
 * `queued` event would (origin, slot, source run); a reason or any other detail takes an event.
 */
function createdOnRow(run: NewRun): boolean {
  return run.reasonCode === null && Object.entries(run.detail).every(([key, value]) => key === 'sourceRunId' && value === run.sourceRunId);
}
