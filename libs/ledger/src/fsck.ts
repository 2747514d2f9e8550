/**
 * Invariant sweeps over the ledger (`kairos fsck`). Each check is one read-only query that returns
 * the rows breaking one ledger invariant (each check's name says which); a healthy ledger returns none.
 * Retention prunes a run in the same statement as its events and its tick, so every check holds
 * on a pruned ledger as on a full one: a pruned run leaves nothing behind that points at it. A run's
 * transitions are read as its story: those on its row and its run_events rows.
 */
import { REASON_CODES, RUN_EVENT_KINDS } from '@kairos/domain';
import type { Queryable } from './database.js';
import { runStorySql } from './runs/run-sql.js';

export interface Violation {
  check: string;
  subject: string;
  detail: string;
}

interface Check {
  name: string;
  sql: string;
  params?: (ctx: { reasonCodes: string[]; eventKinds: string[] }) => unknown[];
}

const CHECKS: Check[] = [
  {
    name: 'terminal-reason',
    sql: `SELECT 'run ' || id AS subject, 'terminal run has reason code ' || coalesce(reason_code, 'NULL') || ', not in the catalogue' AS detail
          FROM runs WHERE finished_at IS NOT NULL AND NOT (reason_code = ANY($1))`,
    params: (c) => [c.reasonCodes],
  },
  {
    name: 'tick-reason',
    sql: `SELECT 'tick ' || schedule_id || '@' || scheduled_for AS subject, 'reason code ' || reason_code || ' is not in the catalogue' AS detail
          FROM ticks WHERE NOT (reason_code = ANY($1))`,
    params: (c) => [c.reasonCodes],
  },
  {
    name: 'event-kind',
    sql: `SELECT 'run ' || run_id AS subject, 'event ' || id || ' has unknown kind ' || kind AS detail
          FROM run_events WHERE NOT (kind = ANY($1))`,
    params: (c) => [c.eventKinds],
  },
  {
    name: 'run-has-queued-event',
    sql: `SELECT 'run ' || r.id AS subject, 'no queued event records its creation' AS detail
          FROM runs r WHERE r.created_event_id IS NULL
            AND NOT EXISTS (SELECT 1 FROM run_events e WHERE e.run_id = r.id AND e.kind = 'queued')`,
  },
  {
    name: 'event-has-run',
    sql: `SELECT 'run ' || e.run_id AS subject, 'event ' || e.id || ' (' || e.kind || ') belongs to no run' AS detail
          FROM run_events e WHERE NOT EXISTS (SELECT 1 FROM runs r WHERE r.id = e.run_id)`,
  },
  {
    name: 'event-matches-state',
    sql: `SELECT 'run ' || r.id AS subject, 'state is ' || r.state || ' but the last transition event says ' || e.to_state AS detail
          FROM runs r
          JOIN LATERAL (SELECT to_state FROM (${runStorySql('r.id')}) story WHERE to_state IS NOT NULL ORDER BY id DESC LIMIT 1) e ON true
          WHERE e.to_state <> r.state`,
  },
  {
    name: 'scheduled-run-has-tick',
    sql: `SELECT 'run ' || r.id AS subject, 'run of origin schedule has no tick pointing at it' AS detail
          FROM runs r WHERE r.origin IN ('schedule', 'backfill') AND NOT EXISTS (SELECT 1 FROM ticks t WHERE t.run_id = r.id)
            -- A step run inherits its multi-step run's origin; the tick points at that run, which this
            -- check holds to it, and step-has-run proves the step's run exists.
            AND r.parent_run_id IS NULL
            -- A run made ahead and withdrawn before its slot gave the slot (and its tick) back.
            AND NOT (r.state = 'cancelled' AND r.reason_code IN ('SCHEDULE_PAUSED', 'SCHEDULE_CHANGED'))`,
  },
  {
    name: 'stale-lease',
    sql: `SELECT 'run ' || id AS subject, 'running with a lease that expired at ' || lease_expires_at || ' and was never reaped' AS detail
          FROM runs WHERE state = 'running' AND lease_expires_at < now() - interval '5 minutes'`,
  },
  {
    name: 'stuck-undispatched',
    sql: `SELECT 'run ' || id AS subject, 'queued and due since ' || available_at || ' but never handed to Redis' AS detail
          FROM runs WHERE state = 'queued' AND enqueued_at IS NULL AND held_at IS NULL AND available_at < now() - interval '5 minutes'
            AND target->>'type' <> 'steps'`,
  },
  {
    name: 'concurrency-limit-exceeded',
    sql: `SELECT 'key ' || concurrency_key AS subject, count(*) || ' runs holding it are running; its limit is ' || min(concurrency_limit) AS detail
          FROM runs WHERE state = 'running' AND concurrency_key IS NOT NULL
          GROUP BY namespace_id, concurrency_key HAVING count(*) > min(concurrency_limit)`,
  },
  {
    name: 'held-with-a-free-place',
    sql: `SELECT 'run ' || h.id AS subject, 'held (' || h.defer_reason || ') since ' || h.held_at || ' though no run holding its key is running' AS detail
          FROM runs h WHERE h.held_at < now() - interval '5 minutes' AND h.defer_reason = 'CONCURRENCY_LIMIT'
            AND NOT EXISTS (SELECT 1 FROM runs a WHERE a.namespace_id = h.namespace_id AND a.concurrency_key = h.concurrency_key AND a.state = 'running')`,
  },
  {
    name: 'held-for-a-served-version',
    sql: `SELECT 'run ' || h.id AS subject, 'held (VERSION_UNAVAILABLE) since ' || h.held_at || ' though a live worker serves its version ' || coalesce(h.version, '(any)') AS detail
          FROM runs h WHERE h.held_at < now() - interval '5 minutes' AND h.defer_reason = 'VERSION_UNAVAILABLE'
            AND EXISTS (SELECT 1 FROM workers w WHERE w.queue = coalesce(h.target->>'queue', 'default')
                        AND kairos_worker_live(w.last_seen_at, w.stopped_at) AND kairos_worker_serves(w.version, w.upgrade, h.version))`,
  },
  {
    name: 'fair-share-backlog-has-turn',
    sql: `SELECT 'run ' || h.id AS subject, 'waits for its turn (FAIR_SHARE) since ' || h.held_at || ' but its key ' || coalesce(h.fairness_key, '(none)') || ' has no turn in queue ' || coalesce(h.target->>'queue', 'default') AS detail
          FROM runs h WHERE h.held_at < now() - interval '1 minute' AND h.defer_reason = 'FAIR_SHARE'
            AND NOT EXISTS (SELECT 1 FROM fair_keys k WHERE k.namespace_id = h.namespace_id AND k.queue = coalesce(h.target->>'queue', 'default')
                            AND k.priority = h.priority AND k.key = coalesce(h.fairness_key, ''))`,
  },
  {
    name: 'fair-share-window-short',
    sql: `SELECT 'queue ' || k.queue AS subject, 'has runs waiting for their turn (FAIR_SHARE) for over a minute, yet only ' || count(w.id) || ' of its window of ' || kairos_fair_window() || ' in the transport' AS detail
          FROM (SELECT DISTINCT namespace_id, queue FROM fair_keys) k
          LEFT JOIN runs w ON w.namespace_id = k.namespace_id AND coalesce(w.target->>'queue', 'default') = k.queue AND w.fair AND w.state = 'queued' AND w.held_at IS NULL
          WHERE EXISTS (SELECT 1 FROM runs h WHERE h.namespace_id = k.namespace_id AND coalesce(h.target->>'queue', 'default') = k.queue
                          AND h.defer_reason = 'FAIR_SHARE' AND h.held_at < now() - interval '1 minute')
          GROUP BY k.namespace_id, k.queue HAVING count(w.id) < kairos_fair_window()`,
  },
  {
    name: 'step-active-under-ended-run',
    sql: `SELECT 'run ' || s.id AS subject, 'step ' || s.step_name || ' is ' || s.state || ' but its run ' || g.id || ' ended ' || g.state AS detail
          FROM runs s JOIN runs g ON g.id = s.parent_run_id
          WHERE s.state IN ('queued', 'running', 'sleeping', 'waiting') AND g.state NOT IN ('queued', 'running')`,
  },
  {
    name: 'step-before-upstream',
    sql: `SELECT 'run ' || s.id AS subject,
                 'step ' || s.step_name || ' is ' || s.state || ' though its upstream step ' || u.step_name || ' is ' || u.state AS detail
          FROM runs s
          JOIN runs g ON g.id = s.parent_run_id
          CROSS JOIN LATERAL jsonb_array_elements(g.target->'steps') spec
          JOIN runs u ON u.parent_run_id = g.id AND u.step_name IN (SELECT jsonb_array_elements_text(spec->'dependsOn'))
          WHERE spec->>'name' = s.step_name AND s.available_at < 'infinity' AND s.state IN ('queued', 'running', 'sleeping', 'waiting')
            AND CASE WHEN spec->>'when' = 'always' THEN u.state IN ('queued', 'running', 'sleeping', 'waiting') ELSE u.state <> 'succeeded' END`,
  },
  {
    name: 'run-stuck-between-steps',
    sql: `SELECT 'run ' || g.id AS subject, 'active since ' || g.available_at || ' but none of its steps is queued or running' AS detail
          FROM runs g WHERE g.target->>'type' = 'steps' AND g.state IN ('queued', 'running') AND g.available_at < now() - interval '5 minutes'
            AND NOT EXISTS (SELECT 1 FROM runs s WHERE s.parent_run_id = g.id
                            AND (s.state IN ('running', 'sleeping', 'waiting') OR (s.state = 'queued' AND s.available_at < 'infinity')))`,
  },
  {
    name: 'parked-run-has-checkpoint',
    sql: `SELECT 'run ' || r.id AS subject, 'run is ' || r.state || ' but has no ' || CASE WHEN r.state = 'sleeping' THEN 'sleep with its wake instant' ELSE 'signal or event it waits for' END AS detail
          FROM runs r WHERE r.state IN ('sleeping', 'waiting')
            AND NOT EXISTS (SELECT 1 FROM run_checkpoints c WHERE c.run_id = r.id
                            AND c.state = CASE WHEN r.state = 'sleeping' THEN 'sleeping' ELSE 'waiting' END
                            AND (r.state = 'waiting' OR c.wake_at = r.available_at))`,
  },
  {
    name: 'event-wait-has-active-run',
    sql: `SELECT 'run ' || w.run_id AS subject, 'waits for event ' || w.name || ' (' || w.checkpoint || ') but the run ' ||
                 coalesce('ended ' || r.state, 'does not exist') AS detail
          FROM event_waits w LEFT JOIN runs r ON r.id = w.run_id
          WHERE r.id IS NULL OR r.state NOT IN ('queued', 'running', 'sleeping', 'waiting')`,
  },
  {
    name: 'event-checkpoint-has-wait',
    sql: `SELECT 'run ' || c.run_id AS subject, 'waits (' || c.name || ') with no record of the event it waits for: no event can resume it' AS detail
          FROM run_checkpoints c JOIN runs r ON r.id = c.run_id
          WHERE c.kind = 'event' AND c.state = 'waiting' AND r.state = 'waiting'
            AND NOT EXISTS (SELECT 1 FROM event_waits w WHERE w.run_id = c.run_id AND w.checkpoint = c.name)`,
  },
  {
    name: 'step-has-run',
    sql: `SELECT 'run ' || s.id AS subject, 'step ' || s.step_name || ' belongs to run ' || s.parent_run_id || ', which does not exist' AS detail
          FROM runs s WHERE s.parent_run_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM runs g WHERE g.id = s.parent_run_id)`,
  },
  {
    // No foreign key holds a run to its namespace (namespaces are never deleted): this check does.
    name: 'run-has-namespace',
    sql: `SELECT 'run ' || r.id AS subject, 'belongs to namespace ' || r.namespace_id || ', which does not exist' AS detail
          FROM runs r WHERE NOT EXISTS (SELECT 1 FROM namespaces n WHERE n.id = r.namespace_id)`,
  },
  {
    name: 'overdue-schedule',
    sql: `SELECT 'schedule ' || id AS subject, 'active but its next slot ' || next_fire_at || ' was never evaluated' AS detail
          FROM schedules WHERE status = 'active' AND next_fire_at < now() - interval '5 minutes'`,
  },
];

export async function fsck(db: Queryable): Promise<Violation[]> {
  const ctx = { reasonCodes: Object.keys(REASON_CODES), eventKinds: [...RUN_EVENT_KINDS] };
  const violations: Violation[] = [];
  for (const check of CHECKS) {
    const { rows } = await db.query<{ subject: string; detail: string }>(check.sql, check.params?.(ctx) ?? []);
    violations.push(...rows.map((r) => ({ check: check.name, ...r })));
  }
  return violations;
}
