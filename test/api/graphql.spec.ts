/**
 * GraphQL at /graphql mirrors REST: the same resources, the same fields with the same
 * values, the same validation with the same codes, and a subscription that follows a run's events
 * until it ends.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';
import { OVERLAP_POLICIES, RUN_STATES, SCHEDULE_STATUSES } from '@kairos/domain';
import { RunsService } from '../../apps/api/src/runs/runs.service.js';
import { api, useKairos, waitFor } from '../support/kairos.js';

const echo = { type: 'handler', name: 'echo' };
const MISSING_ID = '01a226b4-d238-7c31-b6af-28c7c8951e9e';

const RETRY = 'retry { maxAttempts backoff { type base max jitter } }';
const DST = 'dst { gap overlap resolved { gap overlap } description }';
const STEP = `steps { name dependsOn when target retry { maxAttempts backoff { type base max jitter } } timeout concurrency { key limit } priority fairness { key weight } }`;
const RUN_STEP = `steps { name dependsOn when state attempt maxAttempts result error reasonCode reasonText startedAt finishedAt runId }`;
const SCHEDULE = `id name cron every at on { event match } debounce { key period maxWait } throttle { key limit period } rateLimit { key limit period }
  batch { key maxSize timeout } timezone ${DST} catchup { mode window limit } overlap target ${STEP} payload ${RETRY}
  timeout concurrency { key limit } priority fairness { key weight } startAt endAt maxRuns jitter expect { succeededWithin } calendar { exclude weekdaysOnly onExcluded } lateSince paused idempotencyKey labels status
  nextFireAt lastFireAt fireCount createdAt updatedAt deduped`;
const CALENDAR = 'name dates holidays { country state region } description schedules createdAt updatedAt';
const RUN = `id scheduleId origin sourceRunId scheduledFor availableAt deferReason state attempt maxAttempts target ${RUN_STEP} parentRunId stepName
  concurrency { key limit } priority fairnessKey sensorId runKey eventId checkpoints { name kind state result startedAt finishedAt wakeAt } ${RETRY} payload result
  error reasonCode reasonText crashCount cancelRequestedAt idempotencyKey createdAt startedAt finishedAt leaseEpoch progress version`;
const EVENT = 'id at kind fromState toState leaseEpoch actor reasonCode detail';
const EVENT_VIEW = 'id name data receivedAt deduped runs skipped { scheduleId reasonCode } resumed';
const ATTEMPTS = 'attempts { attempt leaseEpoch worker startedAt finishedAt outcome reasonCode error response }';

interface GraphqlResponse {
  status: number;
  data: any;
  errors?: { message: string; path?: string[]; extensions: Record<string, unknown> }[];
}

function graphql(baseUrl: string) {
  return async (query: string, variables: Record<string, unknown> = {}): Promise<GraphqlResponse> => {
    const response = await fetch(`${baseUrl}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query, variables }),
    });
    const body = (await response.json()) as Omit<GraphqlResponse, 'status'>;
    return { status: response.status, ...body };
  };
}

/** The only error of a response, which must have no data for the failed field. */
function onlyError(response: GraphqlResponse) {
  expect(response.errors).toHaveLength(1);
  return response.errors![0]!;
}

describe('GraphQL mirrors the REST API', () => {
  let gql: ReturnType<typeof graphql>;

  const { t, kairos, client: rest } = useKairos({ roles: ['api'] });

  beforeAll(async () => {
    gql = graphql(kairos.url);
  });

  const count = async (table: 'schedules' | 'runs'): Promise<number> => (await t.db.query(`SELECT count(*)::int AS n FROM ${table}`)).rows[0].n;

  it('creates a schedule that reads back exactly as REST returns it', async () => {
    const input = {
      name: 'nightly-report',
      cron: '30 2 * * *',
      timezone: 'Europe/Berlin',
      dst: { gap: 'skip', overlap: 'both' },
      catchup: { mode: 'all', window: '1h', limit: 3 },
      target: echo,
      payload: { any: ['json', 1, 2.5, true, null, { nested: 'yes' }], emoji: 'ü ✓' },
      retry: { maxAttempts: 4, backoff: { type: 'exponential', base: '30s', max: '10m', jitter: 0.2 } },
      timeout: '2m',
      priority: 2,
      fairness: { key: 'tier-{{payload.emoji}}', weight: 4 },
      labels: { team: 'billing', tier: 'gold' },
    };
    const created = await gql(`mutation ($input: JSON!) { createSchedule(input: $input) { ${SCHEDULE} } }`, { input });
    expect(created.errors).toBeUndefined();
    const schedule = created.data.createSchedule;
    expect(schedule).toMatchObject({ name: 'nightly-report', status: 'active', deduped: false, payload: input.payload, labels: input.labels, priority: 2, fairness: input.fairness });

    const viaRest = await rest.get(`/v1/schedules/${schedule.id}`);
    expect(viaRest.status).toBe(200);
    expect(schedule).toEqual(viaRest.body);

    const read = await gql(`query ($id: ID!) { schedule(id: $id) { ${SCHEDULE} } }`, { id: schedule.id });
    expect(read.errors).toBeUndefined();
    expect(read.data.schedule).toEqual(viaRest.body);
  });

  it('accepts the input written inline as a GraphQL literal, with variables inside it', async () => {
    const created = await gql(
      `mutation ($zone: JSON) { createSchedule(input: { name: "inline", every: "15m", timezone: $zone, target: { type: "handler", name: "noop" },
        payload: { n: 1, f: 1.5, list: [1, "two", null], ok: false } }) { id every timezone payload } }`,
      { zone: 'America/New_York' },
    );
    expect(created.errors).toBeUndefined();
    expect(created.data.createSchedule).toMatchObject({ every: '15m', timezone: 'America/New_York', payload: { n: 1, f: 1.5, list: [1, 'two', null], ok: false } });
  });

  it('lists schedules page by page with the same cursors as REST', async () => {
    for (const name of ['page-a', 'page-b', 'page-c']) {
      const created = await gql(`mutation ($input: JSON!) { createSchedule(input: $input) { id } }`, {
        input: { name, every: '1h', target: echo, labels: { group: 'paged' } },
      });
      expect(created.errors).toBeUndefined();
    }
    const page = `query ($cursor: String) { schedules(limit: 2, label: "group:paged", cursor: $cursor) { items { ${SCHEDULE} } nextCursor } }`;
    const first = await gql(page);
    expect(first.errors).toBeUndefined();
    expect(first.data.schedules.items).toHaveLength(2);
    expect(first.data.schedules.nextCursor).toEqual(expect.any(String));
    const restFirst = await rest.get('/v1/schedules?limit=2&label=group:paged');
    expect(first.data.schedules).toEqual(restFirst.body);

    const second = await gql(page, { cursor: first.data.schedules.nextCursor });
    expect(second.data.schedules.items).toHaveLength(1);
    expect(second.data.schedules.nextCursor).toBeNull();
    const names = [...first.data.schedules.items, ...second.data.schedules.items].map((s: { name: string }) => s.name).sort();
    expect(names).toEqual(['page-a', 'page-b', 'page-c']);

    const filtered = await gql(`{ schedules(name: "page-b") { items { name } nextCursor } }`);
    expect(filtered.data.schedules).toEqual({ items: [{ name: 'page-b' }], nextCursor: null });
  });

  it('refuses an invalid cron with the REST code, field and status, and stores nothing', async () => {
    const body = { cron: '61 * * * *', target: echo };
    const before = await count('schedules');
    const response = await gql(`mutation ($input: JSON!) { createSchedule(input: $input) { id } }`, { input: body });
    expect(response.status).toBe(200);
    expect(response.data).toBeNull();
    const error = onlyError(response);
    expect(error.message).toMatch(/minute field: 61 is out of range 0-59/);
    expect(error.path).toEqual(['createSchedule']);
    expect(error.extensions).toEqual({ code: 'INVALID_CRON', field: 'cron', status: 400 });
    expect(await count('schedules')).toBe(before);

    const viaRest = await rest.post('/v1/schedules', body);
    expect(viaRest.status).toBe(400);
    expect(viaRest.body).toEqual({ code: 'INVALID_CRON', field: 'cron', message: error.message });
  });

  it.each([
    ['an unknown field', { cron: '* * * * *', target: echo, cronn: 'x' }, 'UNKNOWN_FIELD', 'cronn'],
    ['an unknown handler', { cron: '* * * * *', target: { type: 'handler', name: 'launch-missiles' } }, 'UNKNOWN_HANDLER', 'target.name'],
    ['a list instead of an object', [{ cron: '* * * * *', target: echo }], 'VALIDATION_FAILED', null],
  ])('refuses %s through the same readers as REST', async (_what, input, code, field) => {
    const response = await gql(`mutation ($input: JSON!) { createSchedule(input: $input) { id } }`, { input });
    expect(onlyError(response).extensions).toEqual({ code, field, status: 400 });
  });

  it.each([
    ['{ schedules(label: "nocolon") { nextCursor } }', 'label'],
    ['{ schedules(cursor: "Zm9v") { nextCursor } }', 'cursor'],
    ['{ runs(limit: 0) { nextCursor } }', 'limit'],
    ['{ deadLetters(scheduleId: "nope") { nextCursor } }', 'scheduleId'],
    ['{ workers(limit: 501) { nextCursor } }', 'limit'],
  ])('refuses the arguments of %s naming %s', async (query, field) => {
    const error = onlyError(await gql(query));
    expect(error.extensions).toMatchObject({ field, status: 400 });
  });

  it('types states, statuses and policies as enums of the REST values', async () => {
    const values = async (name: string) => (await gql(`{ __type(name: "${name}") { kind enumValues { name } } }`)).data.__type;
    // The schema is printed sorted, enum values included.
    const sorted = (names: readonly string[]) => ({ kind: 'ENUM', enumValues: [...names].sort().map((name) => ({ name })) });
    expect(await values('RunState')).toEqual(sorted(RUN_STATES));
    expect(await values('ScheduleStatus')).toEqual(sorted(SCHEDULE_STATUSES));
    expect(await values('OverlapPolicy')).toEqual(sorted(OVERLAP_POLICIES));
    const fieldType = async (type: string, field: string) =>
      (await gql(`{ __type(name: "${type}") { fields { name type { name ofType { name } } } } }`)).data.__type.fields.find((f: any) => f.name === field).type;
    expect(await fieldType('Run', 'state')).toEqual({ name: null, ofType: { name: 'RunState' } });
    expect(await fieldType('Schedule', 'status')).toEqual({ name: null, ofType: { name: 'ScheduleStatus' } });
    expect(await fieldType('Tick', 'reasonCode')).toEqual({ name: null, ofType: { name: 'ReasonCode' } });

    // An enum filter takes the bare value; a value outside the set is GraphQL's own refusal.
    expect((await gql('{ runs(state: succeeded) { nextCursor } }')).errors).toBeUndefined();
    expect((await gql('{ schedules(status: active) { nextCursor } }')).errors).toBeUndefined();
    for (const query of ['{ runs(state: finished) { nextCursor } }', '{ schedules(status: "sleeping") { nextCursor } }']) {
      const response = await gql(query);
      expect(response.status, query).toBe(400);
      expect(onlyError(response).extensions.code, query).toBe('GRAPHQL_VALIDATION_FAILED');
    }
  });

  it('answers unknown ids with NOT_FOUND and status 404, as REST does', async () => {
    for (const [query, path] of [
      [`{ schedule(id: "${MISSING_ID}") { id } }`, `/v1/schedules/${MISSING_ID}`],
      [`{ schedule(id: "not-a-uuid") { id } }`, '/v1/schedules/not-a-uuid'],
      [`{ run(id: "${MISSING_ID}") { id } }`, `/v1/runs/${MISSING_ID}`],
      [`mutation { pauseSchedule(id: "${MISSING_ID}") { id } }`, `/v1/schedules/${MISSING_ID}`],
      [`mutation { cancelRun(id: "${MISSING_ID}") { id } }`, `/v1/runs/${MISSING_ID}`],
    ] as const) {
      const error = onlyError(await gql(query));
      expect(error.extensions).toEqual({ code: 'NOT_FOUND', field: null, status: 404 });
      const viaRest = await rest.get(path);
      expect(viaRest.body).toEqual({ code: 'NOT_FOUND', field: null, message: error.message });
    }
  });

  it('keeps GraphQL\'s own refusals (unknown fields, missing arguments) in the GraphQL shape', async () => {
    const response = await gql('{ schedule(id: "x") { noSuchField } }');
    expect(response.status).toBe(400);
    expect(onlyError(response).extensions.code).toBe('GRAPHQL_VALIDATION_FAILED');
    expect(onlyError(await gql('mutation { createSchedule { id } }')).extensions.code).toBe('GRAPHQL_VALIDATION_FAILED');
  });

  it('pauses, resumes, updates, upserts and deletes like REST', async () => {
    const { data } = await gql(`mutation ($input: JSON!) { createSchedule(input: $input) { id } }`, {
      input: { name: 'lifecycle', cron: '0 * * * *', target: echo },
    });
    const id = data.createSchedule.id;

    const paused = await gql(`mutation ($id: ID!) { pauseSchedule(id: $id) { ${SCHEDULE} } }`, { id });
    expect(paused.data.pauseSchedule).toMatchObject({ status: 'paused', paused: true });
    expect(paused.data.pauseSchedule).toEqual((await rest.get(`/v1/schedules/${id}`)).body);

    const resumed = await gql(`mutation ($id: ID!) { resumeSchedule(id: $id) { status paused nextFireAt } }`, { id });
    expect(resumed.data.resumeSchedule).toMatchObject({ status: 'active', paused: false, nextFireAt: expect.any(String) });

    const updated = await gql(`mutation ($id: ID!, $input: JSON!) { updateSchedule(id: $id, input: $input) { ${SCHEDULE} } }`, {
      id,
      input: { cron: '*/10 * * * *', labels: { owner: 'ops' } },
    });
    expect(updated.errors).toBeUndefined();
    expect(updated.data.updateSchedule).toMatchObject({ cron: '*/10 * * * *', labels: { owner: 'ops' } });
    expect(updated.data.updateSchedule).toEqual((await rest.get(`/v1/schedules/${id}`)).body);

    const upserted = await gql(`mutation ($input: JSON!) { upsertSchedule(name: "lifecycle", input: $input) { id cron } }`, {
      input: { cron: '5 4 * * *', target: echo },
    });
    expect(upserted.data.upsertSchedule).toEqual({ id, cron: '5 4 * * *' });
    const conflicting = await gql(`mutation ($input: JSON!) { upsertSchedule(name: "lifecycle", input: $input) { id } }`, {
      input: { name: 'other', cron: '5 4 * * *', target: echo },
    });
    expect(onlyError(conflicting).extensions).toEqual({ code: 'CONFLICTING_FIELDS', field: 'name', status: 400 });

    const duplicate = await gql(`mutation ($input: JSON!) { createSchedule(input: $input) { id } }`, {
      input: { name: 'lifecycle', cron: '0 * * * *', target: echo },
    });
    expect(onlyError(duplicate).extensions).toEqual({ code: 'CONFLICT', field: 'name', status: 409 });

    const deleted = await gql(`mutation ($id: ID!) { deleteSchedule(id: $id) }`, { id });
    expect(deleted.data).toEqual({ deleteSchedule: true });
    expect(onlyError(await gql(`query ($id: ID!) { schedule(id: $id) { id } }`, { id })).extensions.code).toBe('NOT_FOUND');
  });

  it('triggers, backfills, previews and lists ticks like REST', async () => {
    const { data } = await gql(`mutation ($input: JSON!) { createSchedule(input: $input) { id } }`, {
      input: { name: 'hourly', cron: '0 * * * *', target: echo, payload: { from: 'schedule' } },
    });
    const id = data.createSchedule.id;

    const triggered = await gql(`mutation ($id: ID!) { triggerSchedule(id: $id, input: { payload: { from: "trigger" } }) { ${RUN} ${ATTEMPTS} } }`, { id });
    expect(triggered.errors).toBeUndefined();
    expect(triggered.data.triggerSchedule).toMatchObject({ scheduleId: id, origin: 'manual', state: 'queued', payload: { from: 'trigger' } });
    expect(triggered.data.triggerSchedule).toEqual((await rest.get(`/v1/runs/${triggered.data.triggerSchedule.id}`)).body);

    const hour = 3_600_000;
    const top = Math.floor(Date.now() / hour) * hour;
    const range = { from: new Date(top - 3 * hour).toISOString(), to: new Date(top - hour).toISOString() };
    const backfilled = await gql(`mutation ($id: ID!, $input: JSON!) { backfillSchedule(id: $id, input: $input) { slots created alreadyTicked runs { id origin } } }`, {
      id,
      input: range,
    });
    expect(backfilled.errors).toBeUndefined();
    expect(backfilled.data.backfillSchedule).toMatchObject({ slots: 3, created: 3, alreadyTicked: 0 });
    expect(backfilled.data.backfillSchedule.runs.every((r: { origin: string }) => r.origin === 'backfill')).toBe(true);

    const ticks = await gql(`query ($id: ID!) { scheduleTicks(id: $id, limit: 2) { items { scheduledFor outcome reasonCode reasonText runId origin createdAt } nextCursor } }`, { id });
    expect(ticks.errors).toBeUndefined();
    expect(ticks.data.scheduleTicks).toEqual((await rest.get(`/v1/schedules/${id}/ticks?limit=2`)).body);
    expect(ticks.data.scheduleTicks.nextCursor).toEqual(expect.any(String));

    const after = '2030-01-01T00:30:00Z';
    const preview = await gql(`query ($id: ID!, $after: String) { schedulePreview(id: $id, count: 3, after: $after) }`, { id, after });
    expect(preview.data.schedulePreview).toEqual(['2030-01-01T01:00:00Z', '2030-01-01T02:00:00Z', '2030-01-01T03:00:00Z']);
    // REST's preview also names the DST policy: in GraphQL it is the schedule's own dst.
    const { dst } = (await gql(`query ($id: ID!) { schedule(id: $id) { ${DST} } }`, { id })).data.schedule;
    expect((await rest.get(`/v1/schedules/${id}/preview?count=3&after=${after}`)).body).toEqual({ fireTimes: preview.data.schedulePreview, dst });
  });

  it('starts an ad-hoc run and reads it back with its events, as REST does', async () => {
    const input = {
      target: echo,
      payload: { hello: 'world' },
      priority: 1,
      fairness: { key: 'greeting-{{payload.hello}}' },
      idempotencyKey: 'graphql-run-1',
      availableAt: '2099-01-01T00:00:00Z',
    };
    const created = await gql(`mutation ($input: JSON!) { createRun(input: $input) { ${RUN} ${ATTEMPTS} deduped } }`, { input });
    expect(created.errors).toBeUndefined();
    const run = created.data.createRun;
    expect(run).toMatchObject({ origin: 'manual', state: 'queued', payload: { hello: 'world' }, deduped: false, scheduleId: null, priority: 1, fairnessKey: 'greeting-world' });

    const restRun = await rest.get(`/v1/runs/${run.id}`);
    const { deduped: _deduped, ...fields } = run;
    expect(fields).toEqual(restRun.body);

    const read = await gql(`query ($id: ID!) { run(id: $id) { ${RUN} ${ATTEMPTS} events { ${EVENT} } } }`, { id: run.id });
    expect(read.errors).toBeUndefined();
    const { events, ...readFields } = read.data.run;
    expect(readFields).toEqual(restRun.body);
    expect(events).toEqual((await rest.get(`/v1/runs/${run.id}/events`)).body.items);
    expect(events.map((e: { kind: string }) => e.kind)).toEqual(['queued']);

    const again = await gql(`mutation ($input: JSON!) { createRun(input: $input) { id deduped } }`, { input });
    expect(again.data.createRun).toEqual({ id: run.id, deduped: true });
    const reused = await gql(`mutation ($input: JSON!) { createRun(input: $input) { id deduped } }`, { input: { ...input, payload: { hello: 'other' } } });
    expect(reused.errors![0]!.extensions).toMatchObject({ code: 'IDEMPOTENCY_CONFLICT', field: 'idempotencyKey', status: 409 });
    expect((await t.db.query(`SELECT count(*)::int AS n FROM runs WHERE idempotency_key = 'graphql-run-1'`)).rows[0].n).toBe(1);

    const listed = await gql(`{ runs(state: queued, limit: 50) { items { id } nextCursor } }`);
    expect(listed.data.runs.items.map((r: { id: string }) => r.id)).toContain(run.id);
    expect((await gql(`{ deadLetters { items { id } nextCursor } }`)).data.deadLetters).toEqual({ items: [], nextCursor: null });

    const cancelled = await gql(`mutation ($id: ID!) { cancelRun(id: $id) { state reasonCode } }`, { id: run.id });
    expect(cancelled.data.cancelRun).toEqual({ state: 'cancelled', reasonCode: 'CANCELLED_BY_USER' });
    const cancelAgain = await gql(`mutation ($id: ID!) { cancelRun(id: $id) { id } }`, { id: run.id });
    expect(onlyError(cancelAgain).extensions).toEqual({ code: 'INVALID_STATE', field: null, status: 409 });
    // A cancelled run may be run again, as a failed one may: a fresh run of it.
    const retry = await gql(`mutation ($id: ID!) { retryRun(id: $id) { id origin sourceRunId } }`, { id: run.id });
    expect(retry.data.retryRun).toMatchObject({ origin: 'retry', sourceRunId: run.id });
    const queuedRetry = await gql(`mutation ($id: ID!) { retryRun(id: $id) { id } }`, { id: retry.data.retryRun.id });
    expect(onlyError(queuedRetry).extensions).toEqual({ code: 'INVALID_STATE', field: null, status: 409 });
  });

  it('lists the worker registry as GET /v1/workers does', async () => {
    await t.db.query(`INSERT INTO workers (id, queue, handlers, version, started_at, last_seen_at) VALUES ('host:1:abc', 'media', '{resize}', '1.2.0', now(), now())`);
    const listed = await gql(`{ workers { items { id queue handlers version startedAt lastSeenAt clockOffsetMs } nextCursor } }`);
    expect(listed.data.workers).toEqual((await rest.get('/v1/workers')).body);
    expect(listed.data.workers.items).toContainEqual(expect.objectContaining({ id: 'host:1:abc', queue: 'media', handlers: ['resize'], version: '1.2.0' }));
  });

  it('refuses an invalid ad-hoc run and stores nothing', async () => {
    const before = await count('runs');
    const response = await gql(`mutation { createRun(input: { target: { type: "handler", name: "nope" } }) { id } }`);
    expect(onlyError(response).extensions).toEqual({ code: 'UNKNOWN_HANDLER', field: 'target.name', status: 400 });
    expect(await count('runs')).toBe(before);
  });

  it('previews an ad-hoc spec like POST /v1/cron/preview', async () => {
    const input = { cron: '30 2 * * *', timezone: 'America/New_York', after: '2030-03-08T00:00:00Z', count: 3 };
    const preview = await gql(`query ($input: JSON!) { cronPreview(input: $input) }`, { input });
    expect(preview.errors).toBeUndefined();
    // 2030-03-10 is the spring-forward day in New York: 02:30 does not exist and shifts to 03:30 EDT.
    expect(preview.data.cronPreview).toEqual(['2030-03-08T07:30:00Z', '2030-03-09T07:30:00Z', '2030-03-10T07:30:00Z']);
    const dst = await gql(`query ($input: JSON!) { cronPreviewDst(input: $input) { gap overlap resolved { gap overlap } description } }`, { input });
    expect(dst.errors).toBeUndefined();
    expect(dst.data.cronPreviewDst).toMatchObject({ gap: 'auto', overlap: 'auto', resolved: { gap: 'shift', overlap: 'first' } });
    expect((await rest.post('/v1/cron/preview', input)).body).toEqual({ fireTimes: preview.data.cronPreview, dst: dst.data.cronPreviewDst });

    const invalid = await gql(`{ cronPreview(input: { cron: "0 0 * * 8" }) }`);
    expect(onlyError(invalid).extensions).toEqual({ code: 'INVALID_CRON', field: 'cron', status: 400 });
  });

  it('manages calendars like REST: create, list page by page, get, its dates, put, delete; refusals carry the REST codes', async () => {
    const input = { name: 'bavaria', holidays: { country: 'DE', state: 'BY' }, dates: ['2030-12-31', '2030-12-24'], description: 'Munich office' };
    const created = await gql(`mutation ($input: JSON!) { createCalendar(input: $input) { ${CALENDAR} } }`, { input });
    expect(created.errors).toBeUndefined();
    expect(created.data.createCalendar).toMatchObject({ name: 'bavaria', dates: ['2030-12-24', '2030-12-31'], holidays: { country: 'DE', state: 'BY', region: null }, schedules: 0 });
    expect(created.data.createCalendar).toEqual((await rest.get('/v1/calendars/bavaria')).body);
    expect(onlyError(await gql(`mutation ($input: JSON!) { createCalendar(input: $input) { name } }`, { input })).extensions).toEqual({ code: 'CONFLICT', field: 'name', status: 409 });

    const put = await gql(`mutation ($input: JSON!) { putCalendar(name: "freeze", input: $input) { ${CALENDAR} } }`, { input: { dates: ['2030-12-23'] } });
    expect(put.data.putCalendar).toMatchObject({ name: 'freeze', dates: ['2030-12-23'], holidays: null, description: null });
    const page = `query ($cursor: String) { calendars(limit: 1, cursor: $cursor) { items { ${CALENDAR} } nextCursor } }`;
    const first = await gql(page);
    expect(first.data.calendars).toEqual((await rest.get('/v1/calendars?limit=1')).body);
    const second = await gql(page, { cursor: first.data.calendars.nextCursor });
    expect([...first.data.calendars.items, ...second.data.calendars.items].map((c: { name: string }) => c.name)).toEqual(['bavaria', 'freeze']);
    expect(second.data.calendars.nextCursor).toBeNull();
    expect((await gql(`{ calendar(name: "freeze") { ${CALENDAR} } }`)).data.calendar).toEqual(put.data.putCalendar);

    const dates = await gql(`{ calendarDates(name: "bavaria", from: "2030-12-20", to: "2030-12-31") { from to items { date holiday } } }`);
    expect(dates.errors).toBeUndefined();
    expect(dates.data.calendarDates).toEqual((await rest.get('/v1/calendars/bavaria/dates?from=2030-12-20&to=2030-12-31')).body);
    expect(dates.data.calendarDates.items.map((d: { date: string; holiday: string | null }) => [d.date, d.holiday === null])).toEqual([
      ['2030-12-24', true],
      ['2030-12-25', false],
      ['2030-12-26', false],
      ['2030-12-31', true],
    ]);
    expect(onlyError(await gql(`{ calendarDates(name: "bavaria", from: "2030-02-30") { from } }`)).extensions).toEqual({ code: 'INVALID_DATE', field: 'from', status: 400 });
    expect(onlyError(await gql(`{ calendar(name: "nowhere") { name } }`)).extensions).toEqual({ code: 'NOT_FOUND', field: null, status: 404 });
    expect(onlyError(await gql(`mutation { createCalendar(input: { name: "empty" }) { name } }`)).extensions).toEqual({ code: 'MISSING_FIELD', field: 'dates', status: 400 });

    const schedule = await gql(`mutation ($input: JSON!) { createSchedule(input: $input) { id calendar { exclude weekdaysOnly onExcluded } } }`, {
      input: { name: 'munich-report', cron: '0 9 * * *', timezone: 'Europe/Berlin', target: echo, calendar: { exclude: ['bavaria'], onExcluded: 'next' } },
    });
    expect(schedule.data.createSchedule.calendar).toEqual({ exclude: ['bavaria'], weekdaysOnly: false, onExcluded: 'next' });
    expect((await gql(`{ calendar(name: "bavaria") { schedules } }`)).data.calendar.schedules).toBe(1);
    const inUse = onlyError(await gql(`mutation { deleteCalendar(name: "bavaria") }`));
    expect(inUse.extensions).toEqual({ code: 'CALENDAR_IN_USE', field: 'name', status: 409 });
    expect(inUse.message).toMatch(/"munich-report"/);

    // Both previews list the dates the calendar kept clear, as REST does; none without a calendar.
    const id = schedule.data.createSchedule.id;
    const excluded = await gql(`query ($id: ID!) { schedulePreviewExcludedDates(id: $id, count: 5, after: "2030-12-20T12:00:00Z") }`, { id });
    expect(excluded.data.schedulePreviewExcludedDates).toEqual((await rest.get(`/v1/schedules/${id}/preview?count=5&after=2030-12-20T12:00:00Z`)).body.excludedDates ?? null);
    const adHoc = { cron: '0 9 * * *', timezone: 'Europe/Berlin', after: '2030-12-24T12:00:00Z', count: 2, calendar: { exclude: ['bavaria'] } };
    expect((await gql(`query ($input: JSON!) { cronPreviewExcludedDates(input: $input) }`, { input: adHoc })).data.cronPreviewExcludedDates).toEqual(['2030-12-25', '2030-12-26']);
    const plain = { cron: '0 9 * * *', count: 1 };
    expect((await gql(`query ($input: JSON!) { cronPreviewExcludedDates(input: $input) }`, { input: plain })).data.cronPreviewExcludedDates).toBeNull();

    expect((await gql(`mutation { deleteCalendar(name: "freeze") }`)).data).toEqual({ deleteCalendar: true });
    expect((await rest.get('/v1/calendars/freeze')).status).toBe(404);
    expect(onlyError(await gql(`mutation { deleteCalendar(name: "freeze") }`)).extensions).toEqual({ code: 'NOT_FOUND', field: null, status: 404 });
  });

  it('sends events like REST: a schedule with on starts a run, a repeated id is deduped, events and event read back, batches answer per item', async () => {
    const schedule = await gql(`mutation ($input: JSON!) { createSchedule(input: $input) { ${SCHEDULE} } }`, {
      input: { name: 'on-paid', on: { event: 'order.paid', match: { 'data.plan': 'pro' } }, target: echo, payload: { source: 'graphql' } },
    });
    expect(schedule.errors).toBeUndefined();
    const scheduleId = schedule.data.createSchedule.id;
    expect(schedule.data.createSchedule).toMatchObject({ on: { event: 'order.paid', match: { 'data.plan': 'pro' } }, cron: null, every: null, at: null, nextFireAt: null });
    expect(schedule.data.createSchedule).toEqual((await rest.get(`/v1/schedules/${scheduleId}`)).body);

    const sent = await gql(`mutation ($data: JSON) { sendEvent(name: "order.paid", data: $data, id: "gql-order-1") { ${EVENT_VIEW} } }`, { data: { orderId: 'o-1', plan: 'pro' } });
    expect(sent.errors).toBeUndefined();
    const event = sent.data.sendEvent;
    expect(event).toMatchObject({ id: 'gql-order-1', name: 'order.paid', data: { orderId: 'o-1', plan: 'pro' }, deduped: false, skipped: [], resumed: [] });
    expect(event.runs).toHaveLength(1);
    expect(event).toEqual((await rest.get('/v1/events/gql-order-1')).body);

    // The run the event started carries it, as REST shows it.
    const run = await gql(`query ($id: ID!) { run(id: $id) { ${RUN} ${ATTEMPTS} } }`, { id: event.runs[0] });
    expect(run.errors).toBeUndefined();
    expect(run.data.run).toMatchObject({ scheduleId, origin: 'event', eventId: 'gql-order-1', payload: { source: 'graphql', event: { id: 'gql-order-1', name: 'order.paid', data: { orderId: 'o-1', plan: 'pro' } } } });
    expect(run.data.run).toEqual((await rest.get(`/v1/runs/${event.runs[0]}`)).body);
    expect((await gql(`query ($id: ID!) { runs(scheduleId: $id) { items { id eventId } } }`, { id: scheduleId })).data.runs.items).toEqual([{ id: event.runs[0], eventId: 'gql-order-1' }]);

    // The same id again: the first event, deduped, and no second run.
    const again = await gql(`mutation { sendEvent(name: "order.paid", data: { plan: "pro" }, id: "gql-order-1") { ${EVENT_VIEW} } }`);
    expect(again.data.sendEvent).toEqual({ ...event, deduped: true });
    // No match, no run; no data is null; no id gets one.
    const other = await gql(`mutation { sendEvent(name: "order.paid") { ${EVENT_VIEW} } }`);
    expect(other.errors).toBeUndefined();
    expect(other.data.sendEvent).toMatchObject({ name: 'order.paid', data: null, deduped: false, runs: [] });
    expect(other.data.sendEvent.id).toEqual(expect.any(String));
    expect((await gql(`query ($id: ID!) { runs(scheduleId: $id) { items { id } } }`, { id: scheduleId })).data.runs.items).toHaveLength(1);

    const invalid = await gql(`mutation { sendEvent(name: "order paid") { id } }`);
    expect(onlyError(invalid).extensions).toEqual({ code: 'VALIDATION_FAILED', field: 'name', status: 400 });
    expect((await rest.post('/v1/events', { name: 'order paid' })).body).toEqual({ code: 'VALIDATION_FAILED', field: 'name', message: onlyError(invalid).message });

    const batch = await gql(`mutation ($items: [JSON!]!) { sendEvents(items: $items) { event { ${EVENT_VIEW} } error { code message field } } }`, {
      items: [{ name: 'order.refunded', data: { orderId: 'o-1' }, id: 'gql-refund-1' }, { name: 'order.paid', id: 'gql-order-1' }, { name: '', data: 1 }],
    });
    expect(batch.errors).toBeUndefined();
    const [stored, deduped, refused] = batch.data.sendEvents;
    expect(stored).toMatchObject({ event: { id: 'gql-refund-1', name: 'order.refunded', deduped: false }, error: null });
    expect(deduped).toEqual({ event: { ...event, deduped: true }, error: null });
    expect(refused).toMatchObject({ event: null, error: { code: expect.any(String), field: 'name' } });

    // Listing, newest first, by name, page by page with the REST cursors.
    const page = `query ($cursor: String) { events(name: "order.paid", limit: 1, cursor: $cursor) { items { ${EVENT_VIEW} } nextCursor } }`;
    const first = await gql(page);
    expect(first.errors).toBeUndefined();
    expect(first.data.events).toEqual((await rest.get('/v1/events?name=order.paid&limit=1')).body);
    expect(first.data.events.items.map((e: { id: string }) => e.id)).toEqual([other.data.sendEvent.id]);
    const second = await gql(page, { cursor: first.data.events.nextCursor });
    expect(second.data.events.items.map((e: { id: string }) => e.id)).toEqual(['gql-order-1']);
    expect(second.data.events.nextCursor).toBeNull();
    expect((await gql(`{ events { items { id } nextCursor } }`)).data.events.items.map((e: { id: string }) => e.id)).toEqual(['gql-refund-1', other.data.sendEvent.id, 'gql-order-1']);
    expect(onlyError(await gql(`{ events(cursor: "Zm9v") { nextCursor } }`)).extensions).toMatchObject({ field: 'cursor', status: 400 });
    expect(onlyError(await gql(`{ event(id: "no-such-event") { id } }`)).extensions).toEqual({ code: 'NOT_FOUND', field: null, status: 404 });
  });
});

describe('the runEvents subscription', () => {
  const { kairos } = useKairos({ roles: ['api', 'scheduler', 'worker'] });

  const subscriptionClient = () =>
    createClient({ url: `${kairos.url.replace(/^http/, 'ws')}/graphql`, webSocketImpl: WebSocket, retryAttempts: 0, lazy: true });

  it('delivers a run\'s events in order over graphql-ws and completes when the run has ended', async () => {
    // Due a little later, so the subscription sees the run queued and then follows it live.
    const availableAt = new Date(Date.now() + 1_500).toISOString();
    const created = await graphql(kairos.url)(`mutation ($input: JSON!) { createRun(input: $input) { id } }`, {
      input: { target: echo, payload: { say: 'hi' }, availableAt },
    });
    expect(created.errors).toBeUndefined();
    const runId = created.data.createRun.id;

    const client = subscriptionClient();
    const received: any[] = [];
    let completed = false;
    try {
      const events = client.iterate<{ runEvents: any }>({ query: `subscription ($runId: ID!) { runEvents(runId: $runId) { ${EVENT} } }`, variables: { runId } });
      for await (const result of events) {
        expect(result.errors).toBeUndefined();
        received.push(result.data!.runEvents);
      }
      completed = true;
    } finally {
      await client.dispose();
    }

    expect(completed).toBe(true);
    expect(received.map((e) => [e.kind, e.toState])).toEqual([
      ['queued', 'queued'],
      ['claimed', 'running'],
      ['succeeded', 'succeeded'],
    ]);
    expect(received).toEqual((await api(kairos.url).get(`/v1/runs/${runId}/events`)).body.items);
    const run = await api(kairos.url).get(`/v1/runs/${runId}`);
    expect(run.body).toMatchObject({ state: 'succeeded', result: { say: 'hi' } });
  });

  it('stops polling when the subscriber goes away before the run ends', async () => {
    const created = await graphql(kairos.url)(`mutation ($input: JSON!) { createRun(input: $input) { id } }`, {
      input: { target: echo, availableAt: '2099-01-01T00:00:00Z' },
    });
    const runId = created.data.createRun.id;
    // The feeds the API holds open; a private field, read here because leaking one is invisible from outside.
    const openFeeds = () => (kairos.app.get(RunsService) as unknown as { feeds: Set<unknown> }).feeds.size;

    const client = subscriptionClient();
    try {
      const events = client.iterate<{ runEvents: { kind: string } }>({ query: `subscription { runEvents(runId: "${runId}") { kind } }` });
      for await (const result of events) {
        expect(result.data!.runEvents.kind).toBe('queued');
        expect(openFeeds()).toBe(1);
        break;
      }
      await waitFor(async () => (openFeeds() === 0 ? true : undefined), 'the feed to close', 5_000);
    } finally {
      await client.dispose();
    }
  });

  it('refuses to follow an unknown run with NOT_FOUND', async () => {
    const client = subscriptionClient();
    try {
      const results = [];
      for await (const result of client.iterate({ query: `subscription { runEvents(runId: "${MISSING_ID}") { id } }` })) results.push(result);
      expect(results).toEqual([
        {
          errors: [
            expect.objectContaining({
              message: `run ${MISSING_ID} does not exist`,
              path: ['runEvents'],
              extensions: { code: 'NOT_FOUND', field: null, status: 404 },
            }),
          ],
        },
      ]);
    } finally {
      await client.dispose();
    }
  });
});
