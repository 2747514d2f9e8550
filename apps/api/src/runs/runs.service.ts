/** Run use cases: ad-hoc runs, reading runs and their history, cancellation and manual retry. */
import { Inject, Injectable, type BeforeApplicationShutdown } from '@nestjs/common';
import { ACTIVE_RUN_STATES, RETRYABLE_RUN_STATES, AddressPolicy, concurrencyFor, fairnessFor, assertSameRequest, attemptsOf, checkStorableText, requestHash, ConflictError, isTerminalRunState, newId, NotFoundError, readPayload, ValidationError } from '@kairos/domain';
import { readBatchItems, readRunCreate, readRunVersionMove } from '@kairos/domain/wire';
import { RunRepository, inTransaction, retryTransient, manualRun, type DatabaseClock, type Db, type NewRun, type Page, type RunFilter, type RunRow } from '@kairos/ledger';
import { DATABASE, DATABASE_CLOCK, RunDispatcher } from '@kairos/process';
import type { CallerContext } from '../auth/request-context.js';
import { refusalOf, settledValue, type Settled } from '../requests/batch.js';
import { assertTargetAddressAllowed } from '../targets/target-address.js';
import { WorkersService } from '../workers/workers.service.js';
import { RunEventFeed } from './run-event-feed.js';
import { runEventView, runViews, type RunView, attemptView, type AttemptView } from './run.view.js';


@Injectable()
export class RunsService implements BeforeApplicationShutdown {
  /** Open event feeds, closed before the ledger pool is, so no poll outlives it. */
  private readonly feeds = new Set<RunEventFeed>();

  constructor(
    @Inject(DATABASE) private readonly db: Db,
    @Inject(DATABASE_CLOCK) private readonly clock: DatabaseClock,
    private readonly runs: RunRepository,
    private readonly dispatcher: RunDispatcher,
    private readonly addresses: AddressPolicy,
    private readonly workers: WorkersService,
  ) {}

  /**
   * Starts a run of a target now or at availableAt. A repeated idempotency key returns the first run
   * with `deduped: true`, or IDEMPOTENCY_CONFLICT when the first request had another body.
   */
  async create(caller: CallerContext, body: unknown): Promise<RunView & { deduped: boolean }> {
    return settledValue((await this.createMany(caller, [body]))[0]!);
  }

  /**
   * POST /v1/runs/batch: each item read and created as POST /v1/runs would, in one transaction and
   * one hand-over to the queue. A refused item (its input, its target, a conflicting reuse of its
   * idempotency key) answers with that refusal and stores nothing; the others go on.
   */
  async createBatch(caller: CallerContext, body: unknown): Promise<Settled<RunView & { deduped: boolean }>[]> {
    return this.createMany(caller, readBatchItems(body));
  }

  /** Creates the runs of a request's bodies; each queue's registered handlers are read once for the request. */
  private async createMany(caller: CallerContext, bodies: readonly unknown[]): Promise<Settled<RunView & { deduped: boolean }>[]> {
    const admit = this.workers.admission();
    const nowMs = this.clock.now();
    const answers: Settled<RunView & { deduped: boolean }>[] = [];
    const accepted: { index: number; run: NewRun }[] = [];
    for (const [index, body] of bodies.entries()) {
      const refused = await refusalOf(async () => {
        const request = readRunCreate(body, nowMs);
        assertTargetAddressAllowed(this.addresses, request.target);
        await admit(request.target);
        const run = manualRun({
          id: newId(nowMs),
          namespaceId: caller.namespaceId,
          availableAt: new Date(request.availableAtMs),
          target: request.target,
          payload: request.payload,
          retry: request.retry,
          timeoutMs: request.timeoutMs,
          concurrency: concurrencyFor(request.concurrency, request.payload, 'concurrency'),
          priority: request.priority,
          fairness: fairnessFor(request.fairness, request.payload, 'fairness'),
          idempotencyKey: request.idempotencyKey,
          actor: caller.actor,
        });
        accepted.push({ index, run: { ...run, requestHash: request.idempotencyKey === null ? null : requestHash(body) } });
      });
      if (refused) answers[index] = { ok: false, refusal: refused };
    }
    const { created, dispatch } = await this.runs.createMany(this.db, accepted.map((a) => a.run));
    const views = await this.views(created.map((c) => c.row));
    for (const [i, { deduped, requestHash: storedHash }] of created.entries()) {
      const { index, run } = accepted[i]!;
      const refused = deduped ? await refusalOf(async () => assertSameRequest(storedHash, run.requestHash!, run.idempotencyKey!)) : null;
      answers[index] = refused ? { ok: false, refusal: refused } : { ok: true, value: { ...views[i]!, deduped } };
    }
    await this.dispatcher.dispatch(dispatch);
    return answers;
  }

  async list(caller: CallerContext, filter: RunFilter, limit: number, cursor?: string): Promise<Page<RunView>> {
    const page = await this.runs.list(this.db, caller.namespaceId, filter, limit, cursor);
    return { items: await this.views(page.items), nextCursor: page.nextCursor };
  }

  private async views(rows: readonly RunRow[]): Promise<RunView[]> {
    return runViews(this.db, this.runs, rows);
  }

  private async view(row: RunRow): Promise<RunView> {
    return (await this.views([row]))[0]!;
  }

  /** The run with its attempts (read from its events). */
  async get(caller: CallerContext, id: string): Promise<RunView & { attempts: AttemptView[] }> {
    const run = await this.view(await this.require(caller, id));
    return { ...run, attempts: await this.attemptsOfRun(id) };
  }

  async attempts(caller: CallerContext, id: string): Promise<AttemptView[]> {
    await this.require(caller, id);
    return this.attemptsOfRun(id);
  }

  private async attemptsOfRun(id: string): Promise<AttemptView[]> {
    return attemptsOf(await this.runs.events(this.db, id)).map(attemptView);
  }

  async events(caller: CallerContext, id: string) {
    await this.require(caller, id);
    return { items: (await this.runs.events(this.db, id)).map(runEventView) };
  }

  /**
   * Follows a run's events as they are written: those already recorded first, then each new one,
   * ending after the event of the run's terminal transition. Refuses an unknown run at once.
   */
  async followEvents(caller: CallerContext, id: string): Promise<RunEventFeed> {
    await this.require(caller, id);
    const feed: RunEventFeed = new RunEventFeed(
      async (afterId) => {
        // The state is read before the events: a run seen terminal here has its final event
        // committed already (a transition and its event share a transaction), so it is in the read.
        const run = await this.runs.get(this.db, caller.namespaceId, id);
        const events = await this.runs.events(this.db, id, afterId);
        return { events, ended: run === null || isTerminalRunState(run.state) };
      },
      () => this.feeds.delete(feed),
    );
    this.feeds.add(feed);
    return feed;
  }

  beforeApplicationShutdown(): void {
    for (const feed of [...this.feeds]) feed.close();
  }

  /**
   * Records the cancellation request durably. A queued run ends now; a running one is stopped by
   * its worker when the next lease renewal carries the request.
   */
  async cancel(caller: CallerContext, id: string): Promise<RunView> {
    const run = await this.require(caller, id);
    if (!ACTIVE_RUN_STATES.includes(run.state)) {
      throw new ConflictError('INVALID_STATE', null, `run ${id} already ended (${run.state}); there is nothing to cancel`);
    }
    await retryTransient(() => inTransaction(this.db, (tx) => this.runs.requestCancel(tx, [id], caller.actor, 'CANCELLED_BY_USER', 'cancelled through the API')));
    return this.view(await this.require(caller, id));
  }

  /**
   * Sends signal `name` to run `id`: delivered at once to a run waiting for it, which resumes
   * (its job made due now), else kept until the run asks. Each name once per run.
   */
  async signal(caller: CallerContext, id: string, name: string, body: unknown): Promise<{ delivered: boolean }> {
    if (name.length === 0 || name.length > 200) throw new ValidationError('VALIDATION_FAILED', 'name', 'a signal name is 1 to 200 characters');
    checkStorableText(name, 'name');
    const payload = body === undefined ? null : readPayload({ body }, 'body', '');
    const sent = await inTransaction(this.db, (tx) => this.runs.sendSignal(tx, caller.namespaceId, id, name, payload, caller.actor));
    switch (sent.kind) {
      case 'not_found':
        throw new NotFoundError('run', id);
      case 'ended':
        throw new ConflictError('INVALID_STATE', null, `run ${id} already ended (${sent.state}); there is nothing to signal`);
      case 'already_sent':
        throw new ConflictError('SIGNAL_ALREADY_DELIVERED', 'name', `signal "${name}" was already sent to run ${id}; each signal name is delivered once per run`);
      case 'sent':
        if (sent.woken) await this.dispatcher.wake([sent.woken]);
        return { delivered: sent.woken !== null };
    }
  }

  /**
   * Moves a run to another version of the code (null: any): from now on only workers of that
   * version (or upgrade "auto" ones) claim it. The move is one of the run's events; a run waiting
   * for its version is released in the same transaction, and the relay hands it over.
   */
  async moveVersion(caller: CallerContext, id: string, body: unknown): Promise<RunView> {
    const { version } = readRunVersionMove(body);
    const moved = await retryTransient(() => inTransaction(this.db, (tx) => this.runs.moveVersion(tx, caller.namespaceId, id, version, caller.actor)));
    switch (moved.kind) {
      case 'not_found':
        throw new NotFoundError('run', id);
      case 'ended':
        throw new ConflictError('INVALID_STATE', null, `run ${id} already ended (${moved.state}); only a run that has not ended can move to another version`);
      case 'moved':
        return this.view(await this.require(caller, id));
    }
  }

  /** Runs a failed, dead or cancelled run again as a fresh run (origin retry), with its attempts reset. */
  async retry(caller: CallerContext, id: string): Promise<RunView> {
    return this.rerun(caller, id, 'retry');
  }

  /**
   * Shared by retry and dead-letter republish: a fresh run of the same target and payload, in one
   * transaction. A multi-step run's fresh run keeps the steps that succeeded (their results feed
   * `inputs` as before) and runs the rest again. A cancelled run may be run again as a failed one may.
   */
  async rerun(caller: CallerContext, id: string, origin: 'retry' | 'republish'): Promise<RunView> {
    const source = await this.require(caller, id);
    if (origin === 'republish' && source.state !== 'dead') {
      throw new ConflictError('INVALID_STATE', null, `run ${id} is ${source.state}, not a dead letter; POST /v1/runs/${id}/retry runs a failed run again`);
    }
    if (source.parentRunId !== null) {
      throw new ConflictError('INVALID_STATE', null, `run ${id} is step ${source.stepName} of run ${source.parentRunId}; retry that run, which runs again the steps that did not succeed`);
    }
    if (!RETRYABLE_RUN_STATES.includes(source.state)) {
      throw new ConflictError('INVALID_STATE', null, `run ${id} is ${source.state}; only ${RETRYABLE_RUN_STATES.join(', ')} runs can be run again`);
    }
    const fresh = freshRunOf(source, origin, caller.actor, this.clock.date());
    const { dispatch } = await inTransaction(this.db, (tx) => this.runs.insertRuns(tx, [fresh]));
    await this.dispatcher.dispatch(dispatch);
    return this.view(await this.require(caller, fresh.id));
  }

  private async require(caller: CallerContext, id: string): Promise<RunRow> {
    const run = await this.runs.get(this.db, caller.namespaceId, id);
    if (!run) throw new NotFoundError('run', id);
    return run;
  }
}

/** The fresh run a retry or republish makes of `source`: same target and payload, attempts reset. */
export function freshRunOf(source: RunRow, origin: 'retry' | 'republish', actor: string, now: Date): NewRun {
  return {
    id: newId(now.getTime()),
    namespaceId: source.namespaceId,
    scheduleId: source.scheduleId,
    origin,
    sourceRunId: source.id,
    scheduledFor: source.scheduledFor,
    availableAt: now,
    deferReason: null,
    exclusive: false,
    maxAttempts: source.maxAttempts,
    target: source.target,
    payload: source.payload,
    retry: source.retry,
    timeoutMs: source.timeoutMs,
    concurrency: source.concurrency,
    priority: source.priority,
    fairness: source.fairnessKey === null ? null : { key: source.fairnessKey, weight: source.fairnessWeight ?? 1 },
    sensorId: source.sensorId,
    runKey: null,
    idempotencyKey: null,
    actor,
    reasonCode: null,
    detail: { sourceRunId: source.id },
  };
}
