/**
 * ScheduleRepository.createMany answers each schedule it wrote with the row `get` reads back, field
 * for field and key for key, although the insert returns only what the database decides (ids, its
 * clock, the jsonb columns) and the rest is taken from what was written. A repeated idempotency key
 * answers the first schedule, a conflicting reuse and a taken name are refused, and none of them
 * aborts the others.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { ConflictError, newId, specHash } from '@kairos/domain';
import { readScheduleCreate } from '@kairos/domain/wire';
import { ScheduleRepository, inTransaction, type NewSchedule } from '@kairos/ledger';
import { useTestEnvironment } from '../support/kairos.js';

const handler = { type: 'handler', name: 'echo' };

/** Bodies of every kind of schedule, with JSON whose keys jsonb orders its own way and payloads that must come back as given. */
const BODIES: Record<string, unknown>[] = [
  { in: '10m', target: handler, payload: { i: 1, zeta: -0, 'ké\u00e9': ['\u0000', '\ud800', 1e21, 0.1] } },
  { at: '2026-06-02T09:30:00.250Z', target: { ...handler, queue: 'media' }, paused: true, payload: 'text' },
  {
    cron: '30 2 * * *',
    timezone: 'Europe/Berlin',
    dst: { gap: 'skip', overlap: 'auto' },
    catchup: { mode: 'all', window: '1h', limit: 5 },
    overlap: 'buffer_one',
    target: { type: 'http', url: 'https://example.com/hook', method: 'PUT', headers: { 'X-Longer-Name': '2', 'X-A': '1' }, timeout: '45s' },
    payload: { tenant: 'a', z: [1, { y: null }] },
    retry: { maxAttempts: 4, backoff: { type: 'fixed', base: '2s' } },
    timeout: '5m',
    concurrency: { key: 'payload.tenant', limit: 2 },
    priority: 2,
    fairness: { key: 'payload.tenant', weight: 3 },
    startAt: '2026-06-01T13:00:00Z',
    endAt: '2027-12-01T00:00:00Z',
    maxRuns: 40,
    jitter: '30s',
    labels: { tier: 'gold', team: 'billing', a: 'first' },
    expect: { succeededWithin: '15m' },
    calendar: { weekdaysOnly: true, exclude: ['holidays'], onExcluded: 'next' },
  },
  { every: '90s', target: handler, payload: null },
  { on: { event: 'order.paid', match: { 'data.plan': 'pro', name: 'order.paid', 'data.customer.tier': 1 } }, debounce: { period: '5s', maxWait: '1m' }, target: handler },
  { cron: '0 9 * * 1-5', steps: [{ name: 'fetch', target: handler }, { name: 'send', dependsOn: ['fetch'], target: { type: 'http', url: 'https://example.com/send' } }] },
];

describe('ScheduleRepository.createMany', () => {
  const schedules = new ScheduleRepository();
  const t = useTestEnvironment();
  let namespaceId: string;

  beforeAll(async () => {
    namespaceId = (await t.db.query(`SELECT id FROM namespaces WHERE name = 'default'`)).rows[0].id as string;
  });

  function newSchedule(body: Record<string, unknown>, nowMs: number, extra: Partial<NewSchedule> = {}): NewSchedule {
    const { spec, paused, idempotencyKey } = readScheduleCreate(body, nowMs);
    const id = newId(nowMs);
    return {
      id,
      namespaceId,
      name: spec.name ?? id,
      spec,
      specHash: specHash(spec),
      paused,
      idempotencyKey,
      requestHash: null,
      nextFireAt: spec.timing.kind === 'event' ? null : new Date(nowMs + 3_600_000),
      ...extra,
    };
  }

  it('answers each schedule written with the row get reads, key for key', async () => {
    const nowMs = Date.parse('2026-06-01T12:00:00.123Z');
    const written = BODIES.map((body, i) => newSchedule(body, nowMs, i % 2 === 0 ? { createdAt: new Date(nowMs), source: i === 2 ? 'billing' : null } : {}));
    const answers = await inTransaction(t.db, (tx) => schedules.createMany(tx, written));
    expect(answers).toHaveLength(BODIES.length);
    for (const [i, answer] of answers.entries()) {
      if (!('row' in answer)) throw new Error(`schedule ${i} was refused: ${answer.refusal.message}`);
      expect(answer.deduped).toBe(false);
      const read = await schedules.get(t.db, namespaceId, written[i]!.id);
      expect(answer.row).toEqual(read);
      expect(JSON.stringify(answer.row)).toBe(JSON.stringify(read));
    }
  });

  it('answers a repeated key with the first schedule, and refuses a conflicting reuse and a taken name, without aborting the others', async () => {
    const nowMs = Date.now();
    const body = { in: '1h', target: handler, idempotencyKey: 'repo-repeat' };
    const first = newSchedule(body, nowMs, { requestHash: 'a' });
    const answers = await inTransaction(t.db, (tx) =>
      schedules.createMany(tx, [
        first,
        newSchedule(body, nowMs, { requestHash: 'a' }),
        newSchedule(body, nowMs, { requestHash: 'b' }),
        newSchedule({ name: 'repo-taken', every: '1h', target: handler }, nowMs),
        newSchedule({ name: 'repo-taken', every: '2h', target: handler }, nowMs),
      ]),
    );
    const [made, repeat, conflict, named, taken] = answers;
    expect(made).toMatchObject({ deduped: false, row: { id: first.id, idempotencyKey: 'repo-repeat' } });
    expect(repeat).toEqual({ deduped: true, row: (made as { row: unknown }).row });
    expect((conflict as { refusal: ConflictError }).refusal).toMatchObject({ code: 'IDEMPOTENCY_CONFLICT', field: 'idempotencyKey' });
    expect(named).toMatchObject({ deduped: false, row: { name: 'repo-taken', everyMs: 3_600_000 } });
    expect((taken as { refusal: ConflictError }).refusal).toMatchObject({ code: 'CONFLICT', field: 'name' });
  });
});
