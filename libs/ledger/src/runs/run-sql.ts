/** SQL that more than one run statement says: each fragment is written once, here. */

/**
 * True when schedule `scheduleId` (an SQL expression) has no active exclusive run: none running and
 * none queued and due. A parked run is not active; one may be released only while this holds.
 */
export function noActiveExclusiveRun(scheduleId: string): string {
  return `NOT EXISTS (SELECT 1 FROM runs a WHERE a.schedule_id = ${scheduleId} AND a.exclusive
                           AND (a.state = 'running' OR (a.state = 'queued' AND a.available_at < 'infinity')))`;
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
