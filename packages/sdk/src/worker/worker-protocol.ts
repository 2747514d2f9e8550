/**
 * The worker protocol: a worker's whole conversation with the ledger, each exchange one call of a
 * function of the `kairos_worker` schema, which the server's migrations create. The worker names
 * no table and holds none of the server's SQL, so a server upgrade that changes its tables does not
 * break deployed workers: each function keeps its signature for as long as the server serves its
 * protocol version. A login made by `kairos workers grant` may call these functions and nothing
 * else, and each function checks that the runs and queues it touches are that login's.
 *
 * Every write by a lease holder carries its epoch and owner: a stale epoch changes nothing.
 */
import { storableText, type CallTarget, type CheckpointKind, type CheckpointState, type JsonValue, type ReasonCode, type RetryPolicy, type RunState, type DispatchItem, type WorkerUpgrade } from '@kairos/domain';
import { jsonText, jsonbText, pgConstraint, pgErrorCode, uuidArray, type Queryable } from '@kairos/ledger/postgres';

/**
 * The protocol version this worker speaks. Version 2 added multi-step runs: a claim answers a step
 * run's graph, step name and inputs (claim_runs_v2), and a worker that ended steps takes the steps
 * that became ready (take_ready_steps); and durable functions: a run's checkpoints
 * (run_checkpoints, save_step), and parking it asleep (sleep_run) or for a signal (await_signal).
 * Version 3 added limits: final verdicts answer the runs the places they freed released
 * (finish_runs_v3), for the worker to hand over at once. Version 4 added events: a run parks
 * waiting for an event that matches (await_event). Version 5 added live progress: a handler's
 * ctx.progress stores the run's last reported value (report_progress). Version 6 added versions of
 * the code in flight: a worker registers how it treats runs pinned to another version
 * (register_worker_v2), and says goodbye when it stops (stop_worker), so the runs pinned to its
 * version wait for another of its workers rather than go to a worker of another version.
 */
export const WORKER_PROTOCOL_VERSION = 6;

/** What a worker needs to execute the run it just claimed. */
export interface ClaimedRun {
  id: string;
  namespaceId: string;
  scheduleId: string | null;
  scheduledFor: Date;
  attempt: number;
  maxAttempts: number;
  target: CallTarget;
  payload: JsonValue | null;
  retry: RetryPolicy;
  timeoutMs: number;
  leaseEpoch: number;
  /** True when ending this run may have to release a run parked behind it (overlap buffer or replace). */
  mayReleaseParked: boolean;
  /** The W3C trace context of the tick or request that created the run; null when it was not traced. */
  traceParent: string | null;
  traceState: string | null;
  /** For a step of a multi-step run: the run of its graph, its step's name, and its upstream steps' results by name. */
  graphRunId: string | null;
  stepName: string | null;
  inputs: Record<string, JsonValue | null> | null;
}

/** A checkpoint a run stored (its durable function's step, sleep, or wait for a signal or an event). */
export interface WorkerProtocolCheckpoint {
  name: string;
  kind: CheckpointKind;
  state: CheckpointState;
  result: JsonValue | null;
  wakeAt: Date | null;
}

/** What the ledger answers a wait: what came, or the timeout, or the run parked, or the lease lost. */
export interface WaitAnswer {
  outcome: 'received' | 'timed_out' | 'parked' | 'lost';
  body: JsonValue | null;
  wakeAt: Date | null;
}

/** A wait for an event as the ledger records it (kairos_worker.await_event). */
export interface EventWait {
  /** Its checkpoint: `event:<name>`, `event:<name>#<n>` for the n-th wait on the name in the run. */
  checkpoint: string;
  name: string;
  match: Record<string, JsonValue>;
  /** Events received from this instant on may answer a first wait (the ledger clamps it to its now). */
  since: Date;
  timeoutAt: Date | null;
}

/** What became of one run a worker tried to claim. */
export type ClaimResult =
  | { kind: 'claimed'; run: ClaimedRun }
  /** Another exclusive run of its schedule is running: try again later. */
  | { kind: 'blocked' }
  /** Not queued, not due, or a cancellation is waiting: the run's snapshot says which. */
  | { kind: 'unclaimable' };

export interface RunSnapshot {
  state: RunState;
  /** Milliseconds until the run is due (negative when overdue); null when parked behind another run. */
  dueInMs: number | null;
  cancelRequested: boolean;
  leaseExpiresInMs: number | null;
}

export type FinalVerdict = {
  state: Extract<RunState, 'succeeded' | 'failed' | 'cancelled' | 'dead'>;
  result: JsonValue | null;
  error: Record<string, unknown> | null;
  reasonCode: ReasonCode;
  reasonText: string | null;
  /** What an HTTP target answered, kept with the verdict (the attempt view reads it). */
  response: Record<string, unknown> | null;
};

export interface RetryVerdict {
  delayMs: number;
  error: Record<string, unknown>;
  reasonCode: ReasonCode;
  reasonText: string | null;
  response: Record<string, unknown> | null;
}

export interface LeaseRenewal {
  id: string;
  epoch: number;
  cancelRequested: boolean;
  cancelRequestedBy: string | null;
}

/** A final verdict for one run, written by the holder of its lease at `epoch`. */
export interface FinishedRun {
  runId: string;
  epoch: number;
  verdict: FinalVerdict;
}

/** A failed attempt to retry, written by the holder of its lease at `epoch`. */
export interface RetriedRun {
  runId: string;
  epoch: number;
  retry: RetryVerdict;
}

export interface WorkerRegistration {
  id: string;
  queue: string;
  handlers: readonly string[];
  version: string;
  /** How the worker treats runs pinned to another version: leaves them (`pinned`) or takes them over (`auto`). */
  upgrade: WorkerUpgrade;
  clockOffsetMs: number | null;
}

/** The server serves protocol versions oldest..newest. */
export interface ProtocolVersions {
  oldest: number;
  newest: number;
}

/** The worker and the server speak no common protocol version. */
export class ProtocolMismatchError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ProtocolMismatchError';
  }
}

const BLOCKED: ClaimResult = { kind: 'blocked' };
const UNCLAIMABLE: ClaimResult = { kind: 'unclaimable' };

function claimResult(run: ClaimedRun | undefined): ClaimResult {
  return run ? { kind: 'claimed', run } : UNCLAIMABLE;
}

/** The claim would have put a second exclusive run of one schedule into `running`. */
function isExclusiveRunConflict(error: unknown): boolean {
  return pgErrorCode(error) === '23505' && pgConstraint(error) === 'runs_one_exclusive_running';
}

/** The detail of a retry event: the story explain tells about the attempt that ended. */
function eventDetail(reasonText: string | null, error: Record<string, unknown> | null, response: Record<string, unknown> | null) {
  return { ...(reasonText ? { reasonText } : {}), ...(error ? { error } : {}), ...(response ? { response } : {}) };
}

/** One method per protocol function; `db` is any connection or pool of a login allowed to call them. */
export class WorkerProtocol {
  /** The versions the server serves. Fails when its ledger has no worker protocol (a server older than the protocol). */
  async versions(db: Queryable): Promise<ProtocolVersions> {
    try {
      const { rows } = await db.query<ProtocolVersions>(`SELECT oldest, newest FROM kairos_worker.protocol_versions()`);
      return rows[0]!;
    } catch (error) {
      if (pgErrorCode(error) === '3F000' || pgErrorCode(error) === '42883') return { oldest: 0, newest: 0 };
      throw error;
    }
  }

  /** Refuses, in one line, a server that does not serve this worker's protocol version. */
  async checkVersion(db: Queryable): Promise<void> {
    const { oldest, newest } = await this.versions(db);
    if (WORKER_PROTOCOL_VERSION >= oldest && WORKER_PROTOCOL_VERSION <= newest) return;
    const served = newest === 0 ? 'none (its ledger predates the worker protocol)' : oldest === newest ? `${oldest}` : `${oldest} to ${newest}`;
    const fix = newest === 0 || WORKER_PROTOCOL_VERSION > newest ? 'upgrade the Kairos server' : 'upgrade @kairos/sdk in this worker';
    throw new ProtocolMismatchError(
      `this worker speaks Kairos worker protocol ${WORKER_PROTOCOL_VERSION}; the server serves ${served}: ${fix}`,
    );
  }

  /** Records what the worker serves, and releases the runs of its queue that waited for a worker of its version. */
  async register(db: Queryable, worker: WorkerRegistration): Promise<void> {
    await db.query(`SELECT kairos_worker.register_worker_v2($1, $2, $3, $4, $5, $6)`, [
      worker.id,
      worker.queue,
      [...worker.handlers],
      worker.version,
      worker.clockOffsetMs,
      worker.upgrade,
    ]);
  }

  /** The worker's goodbye: from now on it no longer counts as serving its version. */
  async stop(db: Queryable, id: string): Promise<void> {
    await db.query(`SELECT kairos_worker.stop_worker($1)`, [id]);
  }

  /** The heartbeat's refresh of the worker's registry row and of its clock offset. */
  async touch(db: Queryable, id: string, clockOffsetMs: number | null): Promise<void> {
    await db.query(`SELECT kairos_worker.touch_worker($1, $2)`, [id, clockOffsetMs]);
  }

  async consumerClockOffsets(db: Queryable): Promise<Map<string, number>> {
    const { rows } = await db.query<{ queue: string; offset: number }>(`SELECT queue, "offset" FROM kairos_worker.consumer_clock_offsets()`);
    return new Map(rows.map((r) => [r.queue, r.offset]));
  }

  /**
   * Claims each due, queued run among `runIds` for `owner`, leased for `ttlMs`. The answer has one
   * result per id, in order. A run that would become a second exclusive running run of its
   * schedule is `blocked`; one that is not queued, not due, or has a cancellation waiting is
   * `unclaimable` (its snapshot says which). A run named twice (two jobs of one run, as on two
   * shards of its queue, in one batch) is claimed once: the first of them gets it, the other is
   * `unclaimable`.
   */
  async claimMany(db: Queryable, runIds: readonly string[], owner: string, ttlMs: number): Promise<ClaimResult[]> {
    try {
      const claimed = new Map((await this.claim(db, runIds, owner, ttlMs)).map((r) => [r.id, r]));
      return runIds.map((id) => {
        const run = claimed.get(id);
        claimed.delete(id);
        return claimResult(run);
      });
    } catch (error) {
      if (!isExclusiveRunConflict(error)) throw error;
    }
    // One run of the batch would be a second exclusive run of its schedule: claim them one by one
    // so only that one waits.
    const results: ClaimResult[] = [];
    for (const id of runIds) {
      try {
        results.push(claimResult((await this.claim(db, [id], owner, ttlMs))[0]));
      } catch (error) {
        if (!isExclusiveRunConflict(error)) throw error;
        results.push(BLOCKED);
      }
    }
    return results;
  }

  private async claim(db: Queryable, runIds: readonly string[], owner: string, ttlMs: number): Promise<ClaimedRun[]> {
    const { rows } = await db.query<ClaimedRun>({
      name: 'kairos.worker.claim',
      text: `SELECT * FROM kairos_worker.claim_runs_v2($1, $2::uuid[], $3)`,
      values: [owner, uuidArray(runIds), ttlMs],
    });
    return rows;
  }

  /** Why a claim found nothing to take; null when the run does not exist. */
  async snapshot(db: Queryable, runId: string): Promise<RunSnapshot | null> {
    const { rows } = await db.query<RunSnapshot>(`SELECT * FROM kairos_worker.run_snapshot($1)`, [runId]);
    return rows[0] ?? null;
  }

  /**
   * Writes final verdicts, each fenced by the epoch it was claimed at, in one call. Returns the ids
   * written (a run missing from the answer had lost its lease and nothing changed), and the runs
   * the places they freed released, already marked handed over: the caller hands them over.
   */
  async finishMany(db: Queryable, owner: string, verdicts: readonly FinishedRun[]): Promise<{ written: Set<string>; released: DispatchItem[] }> {
    if (verdicts.length === 0) return { written: new Set(), released: [] };
    const { rows } = await db.query<{ id: string; released: boolean; availableAt: Date | null; queue: string | null; jobId: string | null; priority?: number | null }>({
      name: 'kairos.worker.finish',
      text: `SELECT * FROM kairos_worker.finish_runs_v3($1, $2::json)`,
      values: [
        owner,
        JSON.stringify(
          verdicts.map(({ runId, epoch, verdict: v }) => ({
            id: runId,
            epoch,
            state: v.state,
            result: jsonText(v.result),
            error: jsonbText(v.error),
            reason_code: v.reasonCode,
            reason_text: v.reasonText && storableText(v.reasonText),
            response: jsonbText(v.response),
          })),
        ),
      ],
    });
    return {
      written: new Set(rows.filter((r) => !r.released).map((r) => r.id)),
      // A ledger older than migration 0026 answers no priority: the transport's default order.
      released: rows.filter((r) => r.released).map((r) => ({ id: r.id, availableAt: r.availableAt!, queue: r.queue!, jobId: r.jobId, ...(r.priority != null && { priority: r.priority }) })),
    };
  }

  /**
   * Returns failed attempts to the queue for their next attempt, each due after its delay, fenced
   * like finishMany. The caller keeps each job and delays it, so the runs stay enqueued. Returns
   * when each requeued run is due; runs missing from the answer had lost their lease.
   */
  async requeueMany(db: Queryable, owner: string, retries: readonly RetriedRun[]): Promise<Map<string, Date>> {
    if (retries.length === 0) return new Map();
    const { rows } = await db.query<{ id: string; availableAt: Date }>({
      name: 'kairos.worker.retry',
      text: `SELECT id, "availableAt" FROM kairos_worker.retry_runs($1, $2::json)`,
      values: [
        owner,
        JSON.stringify(
          retries.map(({ runId, epoch, retry: r }) => ({
            id: runId,
            epoch,
            delay_ms: r.delayMs,
            error: jsonbText(r.error),
            reason_code: r.reasonCode,
            detail: jsonbText(eventDetail(r.reasonText, r.error, r.response)),
          })),
        ),
      ],
    });
    return new Map(rows.map((r) => [r.id, r.availableAt]));
  }

  /**
   * The batched heartbeat: extends every lease `owner` still holds among `held`. The answer lists
   * the leases still held and whether cancellation was requested; a run missing from it was lost,
   * and its executor must stop and write nothing.
   */
  async renewLeases(db: Queryable, owner: string, held: readonly { id: string; epoch: number }[], ttlMs: number): Promise<LeaseRenewal[]> {
    if (held.length === 0) return [];
    const { rows } = await db.query<LeaseRenewal>(`SELECT * FROM kairos_worker.renew_leases($1, $2::uuid[], $3::bigint[], $4)`, [
      owner,
      uuidArray(held.map((h) => h.id)),
      held.map((h) => h.epoch),
      ttlMs,
    ]);
    return rows;
  }

  /** Hands a claimed run back at a clean stop of its worker, due now. False when the lease was already lost. */
  async drain(db: Queryable, runId: string, epoch: number, owner: string): Promise<boolean> {
    const { rows } = await db.query<{ drained: boolean }>(`SELECT kairos_worker.drain_run($1, $2, $3) AS drained`, [runId, epoch, owner]);
    return rows[0]!.drained;
  }

  /**
   * Hands a claimed run back because this worker cannot execute it: due again after `delayMs`,
   * doubled for each earlier hand-back up to `maxDelayMs`. Null when the lease was already lost.
   */
  async handBack(
    db: Queryable,
    hand: { runId: string; epoch: number; owner: string; delayMs: number; maxDelayMs: number; reasonCode: ReasonCode; reasonText: string },
  ): Promise<Date | null> {
    const { rows } = await db.query<{ availableAt: Date | null }>(
      `SELECT kairos_worker.hand_back_run($1, $2, $3, $4, $5, $6, $7) AS "availableAt"`,
      [hand.runId, hand.epoch, hand.owner, hand.delayMs, hand.maxDelayMs, hand.reasonCode, hand.reasonText],
    );
    return rows[0]!.availableAt;
  }

  /** Records that a holder's write was refused because its lease had moved on. */
  async recordLeaseLost(db: Queryable, runId: string, epoch: number, owner: string, detail: Record<string, unknown>): Promise<void> {
    await db.query(`SELECT kairos_worker.record_lease_lost($1, $2, $3, $4::jsonb)`, [runId, epoch, owner, JSON.stringify(detail)]);
  }

  /** Cancels a queued run whose cancellation was requested before any worker claimed it. */
  async cancelQueued(db: Queryable, runId: string, actor: string): Promise<boolean> {
    const { rows } = await db.query<{ cancelled: boolean }>(`SELECT kairos_worker.cancel_queued_run($1, $2) AS cancelled`, [runId, actor]);
    return rows[0]!.cancelled;
  }

  /** Releases the oldest run parked behind schedule `scheduleId` once none of its exclusive runs is active. */
  async releaseParked(db: Queryable, scheduleId: string, actor: string): Promise<DispatchItem[]> {
    const { rows } = await db.query<DispatchItem>(`SELECT * FROM kairos_worker.release_parked($1, $2)`, [scheduleId, actor]);
    return rows;
  }

  /**
   * The steps of these graphs that became ready and that no one has handed to the transport yet,
   * marked handed over: the caller hands them over now (the relay takes any left behind).
   */
  async takeReadySteps(db: Queryable, graphRunIds: readonly string[]): Promise<DispatchItem[]> {
    if (graphRunIds.length === 0) return [];
    const { rows } = await db.query<DispatchItem>(`SELECT * FROM kairos_worker.take_ready_steps($1::uuid[])`, [uuidArray(graphRunIds)]);
    return rows;
  }

  /** The checkpoints run `runId` stored, for its holder replaying the handler. */
  async checkpoints(db: Queryable, runId: string): Promise<WorkerProtocolCheckpoint[]> {
    const { rows } = await db.query<WorkerProtocolCheckpoint>(`SELECT * FROM kairos_worker.run_checkpoints($1)`, [runId]);
    return rows;
  }

  /** Stores step `name`'s result, fenced by the lease at `epoch`. False when the lease was lost. */
  async saveStep(db: Queryable, hold: { runId: string; epoch: number; owner: string }, name: string, result: JsonValue | null, startedAt: Date): Promise<boolean> {
    const { rows } = await db.query<{ saved: boolean }>(`SELECT kairos_worker.save_step($1, $2, $3, $4, $5::json, $6) AS saved`, [
      hold.runId,
      hold.epoch,
      hold.owner,
      storableText(name),
      jsonText(result) ?? 'null',
      startedAt,
    ]);
    return rows[0]!.saved;
  }

  /** Stores the run's progress (JSON text of at most 64 KiB), fenced by the lease at `epoch`. False when the lease was lost. */
  async reportProgress(db: Queryable, hold: { runId: string; epoch: number; owner: string }, progressJson: string): Promise<boolean> {
    const { rows } = await db.query<{ stored: boolean }>(`SELECT kairos_worker.report_progress($1, $2, $3, $4::json) AS stored`, [
      hold.runId,
      hold.epoch,
      hold.owner,
      progressJson,
    ]);
    return rows[0]!.stored;
  }

  /** Parks the run sleeping until `wakeAt` (checkpoint `name`), its lease released. False when the lease was lost. */
  async sleepRun(db: Queryable, hold: { runId: string; epoch: number; owner: string }, name: string, wakeAt: Date): Promise<boolean> {
    const { rows } = await db.query<{ parked: boolean }>(`SELECT kairos_worker.sleep_run($1, $2, $3, $4, $5) AS parked`, [hold.runId, hold.epoch, hold.owner, name, wakeAt]);
    return rows[0]!.parked;
  }

  /** Signal `name` if sent, null once the wait timed out, or the run parked waiting for it; `lost` when the lease was. */
  async awaitSignal(
    db: Queryable,
    hold: { runId: string; epoch: number; owner: string },
    name: string,
    timeoutAt: Date | null,
  ): Promise<WaitAnswer> {
    const { rows } = await db.query<WaitAnswer>(`SELECT * FROM kairos_worker.await_signal($1, $2, $3, $4, $5)`, [
      hold.runId,
      hold.epoch,
      hold.owner,
      storableText(name),
      timeoutAt,
    ]);
    return rows[0]!;
  }

  /**
   * The event that answers the wait (one the ledger stored for it, or the first matching one
   * received since `wait.since`), null once the wait timed out, or the run parked waiting for one
   * (its lease released); `lost` when the lease was. Ordered with the events of its name being
   * stored by the name's lock, so each is seen by the wait or sees it.
   */
  async awaitEvent(db: Queryable, hold: { runId: string; epoch: number; owner: string }, wait: EventWait): Promise<WaitAnswer> {
    const { rows } = await db.query<WaitAnswer>(`SELECT * FROM kairos_worker.await_event($1, $2, $3, $4, $5, $6::jsonb, $7, $8)`, [
      hold.runId,
      hold.epoch,
      hold.owner,
      storableText(wait.checkpoint),
      wait.name,
      JSON.stringify(wait.match),
      wait.since,
      wait.timeoutAt,
    ]);
    return rows[0]!;
  }

  /** When each of these runs is due, for those still queued. */
  async availableAt(db: Queryable, runIds: readonly string[]): Promise<Map<string, Date>> {
    const { rows } = await db.query<{ id: string; availableAt: Date }>(`SELECT * FROM kairos_worker.queued_available_at($1::uuid[])`, [
      uuidArray(runIds),
    ]);
    return new Map(rows.map((r) => [r.id, r.availableAt]));
  }

  /** Undoes the enqueued mark of queued runs whose jobs the transport refused. */
  async markUndispatched(db: Queryable, runIds: readonly string[]): Promise<void> {
    if (runIds.length === 0) return;
    await db.query(`SELECT kairos_worker.mark_undispatched($1::uuid[])`, [uuidArray(runIds)]);
  }
}
