/** SQL that more than one run statement says: each fragment is written once, here. */

/**
 * True when schedule `scheduleId` (an SQL expression) has no active exclusive run: none running or
 * parked (sleeping, waiting) and none queued and due. A parked run is not active; one may be released only while this holds.
 */
export function noActiveExclusiveRun(scheduleId: string): string {
  return `NOT EXISTS (SELECT 1 FROM runs a WHERE a.schedule_id = ${scheduleId} AND a.exclusive
                           AND (a.state IN ('running', 'sleeping', 'waiting') OR (a.state = 'queued' AND a.available_at < 'infinity')))`;
}

/**
 * A CTE named dead_letter writing one `run.dead` outbox event, in the same statement, for each row
 * of `source` (a CTE returning id, namespace_id, schedule_id, state, reason_code and reason_text)
 * that ended dead.
 */
export function deadLetterCte(source: string): string {
  return `dead_letter AS (
         INSERT INTO outbox (namespace_id, topic, aggregate_id, payload)
         SELECT namespace_id, 'run.dead', id,
                jsonb_build_object('runId', id, 'scheduleId', schedule_id, 'reasonCode', reason_code, 'reasonText', reason_text)
         FROM ${source} WHERE state = 'dead'
       )`;
}

/** The next id of the run_events sequence: the id of a transition recorded on the run row. */
export const NEXT_EVENT_ID = `nextval('run_events_id_seq')`;

/**
 * RunRepository.insertRows: runs read from one JSON document ($1, the rows; $2 and $3, the trace
 * context creating them), each due one marked handed over unless its queue's backlog makes it wait
 * for its turn (fair share), a repeated idempotency key skipped. Answers the ids written and which
 * of them take part in fair share.
 */
export const INSERT_RUNS_SQL = `INSERT INTO runs (id, namespace_id, schedule_id, origin, source_run_id, scheduled_for, available_at,
                         defer_reason, state, exclusive, max_attempts, target, payload, retry, timeout_ms,
                         idempotency_key, request_hash, enqueued_at, trace_parent, trace_state, created_event_id, created_by,
                         parent_run_id, step_name, concurrency_key, concurrency_limit, sensor_id, run_key, event_id, throttle,
                         priority, fairness_key, fairness_weight, fair, held_at, hold_count)
       SELECT id, ns, sched, origin, src, slot, avail, CASE WHEN waits THEN 'FAIR_SHARE' ELSE defer END, 'queued', excl, maxa, tj,
              pl::json, rt::jsonb, tmo, ikey, rh,
              CASE WHEN avail < 'infinity' AND tj->>'type' <> 'steps' AND NOT waits THEN now() END, $2::text, $3::text,
              CASE WHEN actor IS NOT NULL THEN ${NEXT_EVENT_ID} END, actor, par, step, ckey, clim, sensor, rkey, evt, thr,
              prio, fkey, fweight, fair, CASE WHEN waits THEN now() END, CASE WHEN waits THEN 1 ELSE 0 END
       FROM (
         SELECT t.*, fkey IS NOT NULL OR backlog AS fair,
                -- While its queue has runs waiting for their turn, a run due now waits behind them from the start.
                (fkey IS NOT NULL OR backlog) AND backlog AND avail <= now() + interval '1 second' AND tj->>'type' <> 'steps' AS waits
         FROM (
           SELECT t.*, t.tgt::jsonb AS tj
           FROM json_to_recordset($1::json)
             AS t(id uuid, ns uuid, sched uuid, origin text, src uuid, slot timestamptz, avail timestamptz, defer text, excl boolean,
                  maxa int, tgt text, pl text, rt text, tmo bigint, ikey text, rh text, actor text, par uuid, step text,
                  ckey text, clim int, sensor uuid, rkey text, evt text, thr jsonb, prio smallint, fkey text, fweight smallint)
           -- The target is read once per run: the fence keeps the planner from copying the cast into each use.
           OFFSET 0
         ) t
         CROSS JOIN LATERAL (
           -- Looked up per run only while some queue has a backlog waiting its turn.
           SELECT (SELECT EXISTS (SELECT 1 FROM fair_queues))
                  AND EXISTS (SELECT 1 FROM fair_queues f WHERE f.namespace_id = t.ns AND f.queue = coalesce(t.tj->>'queue', 'default')) AS backlog
         ) b
       ) r
       ON CONFLICT (namespace_id, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING
       RETURNING id, fair`;

/** An instant as formatInstant writes it in JSON: milliseconds only when there are some. */
function instantJson(column: string): string {
  return `to_char(${column} AT TIME ZONE 'UTC', CASE WHEN date_trunc('second', ${column}) = ${column}
            THEN 'YYYY-MM-DD"T"HH24:MI:SS"Z"' ELSE 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"' END)`;
}

/**
 * The happy-path transitions recorded on run row `r` (an alias of runs), as run_events rows
 * (`row_event`), exactly as the event each replaces would read: created, the first claim and the
 * holder's verdict. A transition recorded as an event instead has a null id here.
 */
function rowEvents(r: string): string {
  return `(VALUES
      (${r}.created_event_id, ${r}.created_at, 'queued', NULL::text, 'queued', 0::bigint, ${r}.created_by, NULL::text,
       jsonb_build_object('origin', ${r}.origin, 'scheduledFor', ${instantJson(`${r}.scheduled_for`)})
         || CASE WHEN ${r}.source_run_id IS NULL THEN '{}'::jsonb ELSE jsonb_build_object('sourceRunId', ${r}.source_run_id) END),
      (${r}.claimed_event_id, ${r}.started_at, 'claimed', 'queued', 'running', ${r}.claimed_epoch, ${r}.claimed_by, NULL,
       jsonb_build_object('attempt', ${r}.claimed_attempt, 'leaseExpiresAt', ${r}.claimed_until)),
      (${r}.finished_event_id, ${r}.finished_at, ${r}.state, 'running', ${r}.state, ${r}.lease_epoch, ${r}.finished_by, ${r}.reason_code,
       CASE WHEN coalesce(${r}.reason_text, '') = '' THEN '{}'::jsonb ELSE jsonb_build_object('reasonText', ${r}.reason_text) END
         || CASE WHEN ${r}.error IS NULL THEN '{}'::jsonb ELSE jsonb_build_object('error', ${r}.error) END
         || CASE WHEN ${r}.response IS NULL THEN '{}'::jsonb ELSE jsonb_build_object('response', ${r}.response) END)
    ) AS row_event(id, at, kind, from_state, to_state, lease_epoch, actor, reason_code, detail)`;
}

/**
 * A run's whole story as run_events rows (id, at, kind, from_state, to_state, lease_epoch, actor,
 * reason_code, detail), unordered: its run_events rows and the transitions on its row. `runId` is
 * an SQL expression (a parameter, or a column of an outer query).
 */
export function runStorySql(runId: string): string {
  return `SELECT id, at, kind, from_state, to_state, lease_epoch, actor, reason_code, detail FROM run_events WHERE run_id = ${runId}
          UNION ALL
          SELECT row_event.* FROM runs story_run CROSS JOIN LATERAL ${rowEvents('story_run')}
          WHERE story_run.id = ${runId} AND row_event.id IS NOT NULL`;
}
