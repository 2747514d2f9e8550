/**
 * Schedules as code: POST /v1/apply plans a source's declared schedules and applies the plan in
 * one transaction; a re-apply changes nothing; a changed declaration updates exactly the changed
 * fields, keeping ids and recording versions; prune deletes only the source's own leftovers; an
 * invalid schedule applies nothing; concurrent applies never interleave. The CLI applies YAML and
 * JSON files over HTTP against a server that requires keys.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { runCli } from '../../apps/cli/src/cli.js';
import { builtMain } from '../support/build.js';
import { api, issueKey, useKairos } from '../support/kairos.js';
import { spawnProcess } from '../support/processes.js';

const target = { type: 'handler', name: 'echo' };

/** `n` schedules of a declaration, each with its own cron minute and payload. */
const declared = (n: number, prefix = 'job') =>
  Array.from({ length: n }, (_, i) => ({ name: `${prefix}-${i}`, cron: `${i % 60} 3 * * *`, timezone: 'Europe/Berlin', target, payload: { i } }));

describe('POST /v1/apply', () => {
  const { t, client } = useKairos({ roles: ['api'] });

  const count = async (sql: string, values: unknown[] = []): Promise<number> => (await t.db.query(sql, values)).rows[0].n;
  const sourceCount = (source: string) => count(`SELECT count(*)::int AS n FROM schedules WHERE source = $1 AND deleted_at IS NULL`, [source]);
  const versionCount = () => count(`SELECT count(*)::int AS n FROM schedule_versions`);

  it('plans 50 schedules, applies them in one go, and a re-apply changes nothing', async () => {
    const schedules = declared(50);
    const dry = await client.post('/v1/apply', { source: 'billing', schedules, dryRun: true });
    expect(dry.status).toBe(200);
    expect(dry.body.applied).toBe(false);
    expect(dry.body.plan.map((p: { action: string }) => p.action)).toEqual(Array(50).fill('create'));
    expect(dry.body.plan[0].changes).toContainEqual({ field: 'cron', from: null, to: '0 3 * * *' });
    expect(await sourceCount('billing')).toBe(0);

    const applied = await client.post('/v1/apply', { source: 'billing', schedules });
    expect(applied.body).toMatchObject({ applied: true });
    expect(await sourceCount('billing')).toBe(50);
    const versions = await versionCount();
    const cursors = (await t.db.query(`SELECT id, next_fire_at, updated_at FROM schedules WHERE source = 'billing' ORDER BY id`)).rows;

    const again = await client.post('/v1/apply', { source: 'billing', schedules });
    expect(again.body.plan.every((p: { action: string }) => p.action === 'unchanged')).toBe(true);
    expect(await versionCount()).toBe(versions);
    expect((await t.db.query(`SELECT id, next_fire_at, updated_at FROM schedules WHERE source = 'billing' ORDER BY id`)).rows).toEqual(cursors);

    const one = (await client.get('/v1/schedules?limit=100')).body.items.find((s: { name: string }) => s.name === 'job-7');
    const history = await client.get(`/v1/schedules/${one.id}/versions`);
    expect(history.body.items).toEqual([expect.objectContaining({ version: 1, source: 'billing', specHash: expect.any(String), changes: expect.any(Array) })]);
  });

  it('updates exactly the changed fields, keeping ids and cursors of the rest, and records a version of each change', async () => {
    const schedules = declared(10, 'change');
    await client.post('/v1/apply', { source: 'changes', schedules });
    const before = new Map((await t.db.query(`SELECT name, id, next_fire_at FROM schedules WHERE source = 'changes'`)).rows.map((r) => [r.name, r]));
    const changed: Record<string, unknown>[] = schedules.map((s) => ({ ...s }));
    changed[2] = { ...changed[2], cron: '15 4 * * *' };
    changed[5] = { ...changed[5], retry: { maxAttempts: 5 } };
    changed[8] = { ...changed[8], payload: { i: 8, more: true } };

    const plan = (await client.post('/v1/apply', { source: 'changes', schedules: changed, dryRun: true })).body.plan;
    const updates = plan.filter((p: { action: string }) => p.action === 'update');
    expect(updates.map((p: { name: string }) => p.name)).toEqual(['change-2', 'change-5', 'change-8']);
    expect(updates[0].changes).toEqual([
      { field: 'cron', from: '2 3 * * *', to: '15 4 * * *' },
      { field: 'nextFireAt', from: expect.any(String), to: expect.any(String) },
    ]);
    expect(updates[1].changes).toEqual([{ field: 'retry.maxAttempts', from: 3, to: 5 }]);
    expect(updates[2].changes).toEqual([{ field: 'payload', from: { i: 8 }, to: { i: 8, more: true } }]);

    expect((await client.post('/v1/apply', { source: 'changes', schedules: changed })).body.applied).toBe(true);
    const after = new Map((await t.db.query(`SELECT name, id, next_fire_at FROM schedules WHERE source = 'changes'`)).rows.map((r) => [r.name, r]));
    for (const [name, row] of before) {
      expect(after.get(name)!.id).toBe(row.id);
      if (name !== 'change-2') expect(after.get(name)!.next_fire_at).toEqual(row.next_fire_at);
    }
    const history = (await client.get(`/v1/schedules/${before.get('change-5')!.id}/versions`)).body.items;
    expect(history.map((v: { version: number }) => v.version)).toEqual([2, 1]);
    expect(history[0].changes).toEqual([{ field: 'retry.maxAttempts', from: 3, to: 5 }]);

    // explain says which version of its schedule a run was made from.
    const run = await client.post(`/v1/schedules/${before.get('change-5')!.id}/trigger`, {});
    const lines: string[] = [];
    expect(await runCli(['explain', run.body.id], { line: (l) => lines.push(l) }, { DATABASE_URL: t.databaseUrl })).toBe(0);
    expect(lines.join('\n')).toContain('made from version 2 of the schedule (applied by source changes)');
  });

  it('shows a schedule changed by hand as drift, and brings it back', async () => {
    const schedules = declared(2, 'drift');
    await client.post('/v1/apply', { source: 'drifting', schedules });
    const id = (await t.db.query(`SELECT id FROM schedules WHERE name = 'drift-1'`)).rows[0].id;
    expect((await client.patch(`/v1/schedules/${id}`, { timezone: 'UTC' })).status).toBe(200);
    const plan = (await client.post('/v1/apply', { source: 'drifting', schedules, dryRun: true })).body.plan;
    expect(plan[1]).toMatchObject({ name: 'drift-1', action: 'update', changes: expect.arrayContaining([{ field: 'timezone', from: 'UTC', to: 'Europe/Berlin' }]) });
    await client.post('/v1/apply', { source: 'drifting', schedules });
    const history = (await client.get(`/v1/schedules/${id}/versions`)).body.items;
    // The change by hand is a version of its own, made through the API (no source).
    expect(history.map((v: { source: string | null; version: number }) => [v.version, v.source])).toEqual([
      [3, 'drifting'],
      [2, null],
      [1, 'drifting'],
    ]);
    expect(history[1].changes).toEqual([{ field: 'timezone', from: 'Europe/Berlin', to: 'UTC' }]);
  });

  it("prunes only the source's own leftovers", async () => {
    await client.post('/v1/apply', { source: 'prune-a', schedules: declared(4, 'pa') });
    await client.post('/v1/apply', { source: 'prune-b', schedules: declared(2, 'pb') });
    expect((await client.post('/v1/schedules', { name: 'by-hand', every: '1h', target })).status).toBe(201);
    const kept = declared(4, 'pa').slice(0, 2);

    const withoutPrune = (await client.post('/v1/apply', { source: 'prune-a', schedules: kept })).body.plan;
    expect(withoutPrune.map((p: { action: string }) => p.action)).toEqual(['unchanged', 'unchanged']);
    expect(await sourceCount('prune-a')).toBe(4);

    const pruned = (await client.post('/v1/apply', { source: 'prune-a', schedules: kept, prune: true })).body.plan;
    expect(pruned.filter((p: { action: string }) => p.action === 'delete').map((p: { name: string }) => p.name).sort()).toEqual(['pa-2', 'pa-3']);
    expect(await sourceCount('prune-a')).toBe(2);
    expect(await sourceCount('prune-b')).toBe(2);
    expect(await count(`SELECT count(*)::int AS n FROM schedules WHERE name = 'by-hand' AND deleted_at IS NULL`)).toBe(1);
  });

  it('applies nothing when one schedule is invalid, and says which, where', async () => {
    const schedules = declared(10, 'bad');
    schedules[7] = { ...schedules[7]!, cron: '0 0 * * 8' };
    const versions = await versionCount();
    const refused = await client.post('/v1/apply', { source: 'invalid', schedules });
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ code: 'INVALID_CRON', field: 'schedules[7].cron' });
    expect(refused.body.message).toMatch(/^schedules\[7\] \(bad-7\)\.cron: /);
    expect(await sourceCount('invalid')).toBe(0);
    expect(await versionCount()).toBe(versions);

    for (const [body, field] of [
      [{ schedules: [] }, 'source'],
      [{ source: 'x', schedules: [{ every: '1m', target }] }, 'schedules[0].name'],
      [{ source: 'x', schedules: [{ name: 'a', every: '1m', target }, { name: 'a', every: '2m', target }] }, 'schedules[1].name'],
      [{ source: 'x', schedules: [{ name: 'a', every: '1m', target, idempotencyKey: 'k' }] }, 'schedules[0].idempotencyKey'],
      [{ source: 'x', schedules: [{ name: 'a', in: '10m', target }] }, 'schedules[0].in'],
      [{ source: 'x', schedules: [{ name: 'a', every: '1m', target: { type: 'handler', name: 'nobody-has-it' } }] }, 'schedules[0].target.name'],
      [{ source: 'x', schedules: [], sensors: [{ name: 's' }] }, 'sensors[0].every'],
      [{ source: 'x', schedules: [], plan: true }, null],
    ] as const) {
      const answer = await client.post('/v1/apply', body);
      expect(answer.status, JSON.stringify(body)).toBe(400);
      if (field !== null) expect(answer.body.field, JSON.stringify(answer.body)).toBe(field);
    }
    expect(await sourceCount('x')).toBe(0);
  });

  it('never interleaves applies, of one source or of two', async () => {
    const a = declared(30, 'race').map((s) => ({ ...s, payload: { side: 'a' } }));
    const b = declared(30, 'race').map((s) => ({ ...s, payload: { side: 'b' } }));
    const answers = await Promise.all([
      client.post('/v1/apply', { source: 'racer', schedules: a }),
      client.post('/v1/apply', { source: 'racer', schedules: b }),
      client.post('/v1/apply', { source: 'other-racer', schedules: declared(30, 'other') }),
    ]);
    expect(answers.map((r) => r.status)).toEqual([200, 200, 200]);
    const sides = (await t.db.query(`SELECT DISTINCT payload->>'side' AS side FROM schedules WHERE source = 'racer'`)).rows;
    expect(sides).toHaveLength(1);
    expect(await sourceCount('racer')).toBe(30);
    expect(await sourceCount('other-racer')).toBe(30);
    // The second apply planned against what the first wrote: its plan updated all 30, or none.
    const updated = answers.slice(0, 2).map((r) => r.body.plan.filter((p: { action: string }) => p.action === 'update').length);
    expect(updated.sort()).toEqual([0, 30]);
  });

  it('writes its calendars before its schedules, which may name them; plans them create, update or unchanged, and never prunes one', async () => {
    const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);
    const closed = { name: 'office-closed', dates: [day(0), day(1), day(2)], description: 'moving house' };
    const noon = { name: 'noon', cron: '0 12 * * *', timezone: 'UTC', target, calendar: { exclude: ['office-closed'] } };
    const calendars = () => count(`SELECT count(*)::int AS n FROM calendars WHERE name = 'office-closed'`);

    // A dry run plans the schedules with the calendars the declaration holds, written or not.
    const dry = await client.post('/v1/apply', { source: 'office', calendars: [closed], schedules: [noon], dryRun: true });
    expect(dry.status, JSON.stringify(dry.body)).toBe(200);
    expect(dry.body.plan).toEqual([
      {
        kind: 'calendar',
        name: 'office-closed',
        action: 'create',
        changes: [
          { field: 'dates', from: null, to: closed.dates },
          { field: 'description', from: null, to: 'moving house' },
        ],
      },
      expect.objectContaining({ kind: 'schedule', name: 'noon', action: 'create' }),
    ]);
    expect(await calendars()).toBe(0);

    expect((await client.post('/v1/apply', { source: 'office', calendars: [closed], schedules: [noon] })).body.applied).toBe(true);
    expect((await client.get('/v1/calendars/office-closed')).body).toMatchObject({ dates: closed.dates, holidays: null, schedules: 1 });
    const schedule = (await client.get('/v1/schedules?name=noon')).body.items[0];
    expect(schedule.calendar).toEqual({ exclude: ['office-closed'], weekdaysOnly: false, onExcluded: 'skip' });
    const firstFire = async () => (await client.get(`/v1/schedules/${schedule.id}/preview?count=1`)).body.fireTimes[0];
    expect(await firstFire()).toBe(`${day(3)}T12:00:00Z`);

    const again = await client.post('/v1/apply', { source: 'office', calendars: [closed], schedules: [noon] });
    expect(again.body.plan.map((p: { kind: string; action: string }) => `${p.kind} ${p.action}`)).toEqual(['calendar unchanged', 'schedule unchanged']);

    // A changed calendar re-plans the schedules naming it, in the same transaction; the schedule itself is unchanged.
    const reopened = { ...closed, dates: [day(0)], holidays: { country: 'DE', state: 'BY' } };
    const changed = await client.post('/v1/apply', { source: 'office', calendars: [reopened], schedules: [noon] });
    expect(changed.body.plan).toEqual([
      {
        kind: 'calendar',
        name: 'office-closed',
        action: 'update',
        changes: [
          { field: 'dates', from: closed.dates, to: [day(0)] },
          { field: 'holidays', from: null, to: { country: 'DE', state: 'BY', region: null } },
        ],
      },
      { kind: 'schedule', name: 'noon', action: 'unchanged', changes: [] },
    ]);
    expect((await client.get('/v1/calendars/office-closed')).body).toMatchObject({ dates: [day(0)], holidays: { country: 'DE', state: 'BY', region: null } });
    const excluded = (await client.get(`/v1/calendars/office-closed/dates?from=${day(1)}&to=${day(3)}`)).body.items.map((d: { date: string }) => d.date);
    expect(await firstFire()).toBe(`${[day(1), day(2), day(3)].find((d) => !excluded.includes(d))}T12:00:00Z`);

    // A prune deletes the source's schedules, never a calendar: another source's schedules may name it.
    const pruned = await client.post('/v1/apply', { source: 'office', schedules: [], prune: true });
    expect(pruned.body.plan).toEqual([{ kind: 'schedule', name: 'noon', action: 'delete', changes: [] }]);
    expect(await calendars()).toBe(1);
  });

  it('applies nothing when a calendar is refused, or a schedule after the calendars were written, and says which, where', async () => {
    const holidays = (name: string) => ({ name, holidays: { country: 'DE' } });
    for (const [body, code, field, message] of [
      [{ source: 'cal', calendars: [holidays('fine'), { name: 'bad-date', dates: ['2026-02-30'] }] }, 'INVALID_DATE', /^calendars\[1\]\.dates/, /^calendars\[1\] \(bad-date\)\.dates/],
      [{ source: 'cal', calendars: [holidays('twice'), holidays('twice')] }, 'CONFLICTING_FIELDS', /^calendars\[1\]\.name$/, /calendars\[0\] already declares "twice"/],
      [{ source: 'cal', calendars: [{ name: 'empty' }] }, 'MISSING_FIELD', /^calendars\[0\]\.dates$/, /^calendars\[0\] \(empty\)\.dates: /],
      [{ source: 'cal', calendars: ['bavaria'] }, 'VALIDATION_FAILED', /^calendars\[0\]$/, /^calendars\[0\]: must be a JSON object/],
      [{ source: 'cal', calendars: [holidays('named')], schedules: [{ name: 's', every: '1h', target, calendar: { exclude: ['named', 'nowhere'] } }] }, 'UNKNOWN_CALENDAR', /^schedules\[0\]\.calendar\.exclude\[1\]$/, /no calendar named "nowhere"/],
    ] as const) {
      const answer = await client.post('/v1/apply', body);
      expect(answer.status, JSON.stringify(body)).toBe(400);
      expect(answer.body.code, JSON.stringify(answer.body)).toBe(code);
      expect(answer.body.field).toMatch(field);
      expect(answer.body.message).toMatch(message);
    }
    // The schedule's last two slots fall on dates the calendar moves past its end: refused once the calendar is written, which is undone with it.
    const refused = await client.post('/v1/apply', {
      source: 'cal',
      calendars: [{ name: 'new-year', dates: ['2031-01-01', '2031-01-02'] }],
      schedules: [
        { name: 'twice', cron: '0 12 * * *', timezone: 'UTC', startAt: '2031-01-01T00:00:00Z', endAt: '2031-01-02T13:00:00Z', target, calendar: { exclude: ['new-year'], onExcluded: 'next' } },
      ],
    });
    expect(refused.body).toMatchObject({ code: 'NO_FUTURE_FIRE', field: 'schedules[0].calendar' });
    expect(await count(`SELECT count(*)::int AS n FROM calendars WHERE name = ANY($1)`, [['fine', 'bad-date', 'twice', 'empty', 'named', 'new-year']])).toBe(0);
    expect(await sourceCount('cal')).toBe(0);
  });

  it('applies priority and fairness: creates them, re-applies unchanged, plans and records a change of each, and a schedule made before them compares unchanged', async () => {
    const plain = { name: 'plain-tenant', cron: '0 4 * * *', target };
    expect((await client.post('/v1/apply', { source: 'tenants', schedules: [plain] })).body.applied).toBe(true);
    const tenant = { name: 'tenant-sync', cron: '0 4 * * *', target, payload: { tenantId: 't-9' }, priority: 2, fairness: { key: 'tenant-{{payload.tenantId}}', weight: 3 } };
    const created = await client.post('/v1/apply', { source: 'tenants', schedules: [plain, tenant] });
    expect(created.body.plan).toEqual([
      { kind: 'schedule', name: 'plain-tenant', action: 'unchanged', changes: [] },
      expect.objectContaining({ name: 'tenant-sync', action: 'create', changes: expect.arrayContaining([{ field: 'priority', from: null, to: 2 }]) }),
    ]);
    const schedule = (await client.get('/v1/schedules?name=tenant-sync')).body.items[0];
    expect(schedule).toMatchObject({ priority: 2, fairness: { key: 'tenant-{{payload.tenantId}}', weight: 3 } });
    expect((await client.post('/v1/apply', { source: 'tenants', schedules: [plain, tenant] })).body.plan.map((p: { action: string }) => p.action)).toEqual(['unchanged', 'unchanged']);

    const changed = { ...tenant, priority: 5, fairness: { key: 'tenant-{{payload.tenantId}}', weight: 1 } };
    const updated = await client.post('/v1/apply', { source: 'tenants', schedules: [plain, changed] });
    expect(updated.body.plan[1]).toEqual({
      kind: 'schedule',
      name: 'tenant-sync',
      action: 'update',
      changes: [
        { field: 'fairness.weight', from: 3, to: 1 },
        { field: 'priority', from: 2, to: 5 },
      ],
    });
    expect((await client.get(`/v1/schedules/${schedule.id}`)).body).toMatchObject({ priority: 5, fairness: { weight: 1 } });
    // Back to the defaults: the fields leave the definition.
    const back = await client.post('/v1/apply', { source: 'tenants', schedules: [plain, { ...tenant, priority: undefined, fairness: undefined }] });
    expect(back.body.plan[1].changes).toEqual(
      expect.arrayContaining([
        { field: 'priority', from: 5, to: null },
        { field: 'fairness', from: { key: 'tenant-{{payload.tenantId}}', weight: 1 }, to: null },
      ]),
    );
    expect((await client.get(`/v1/schedules/${schedule.id}`)).body).toMatchObject({ priority: 3, fairness: null });
  });

  it('applies a schedule started by events (on): creates it, re-applies it unchanged, updates its match, and an event starts its run', async () => {
    const welcome = { name: 'welcome-pro', on: { event: 'order.paid', match: { 'data.plan': 'pro' } }, target, payload: { template: 'pro' }, overlap: 'allow' };
    const dry = await client.post('/v1/apply', { source: 'events', schedules: [welcome], dryRun: true });
    expect(dry.status, JSON.stringify(dry.body)).toBe(200);
    expect(dry.body.plan).toEqual([expect.objectContaining({ kind: 'schedule', name: 'welcome-pro', action: 'create' })]);
    expect(JSON.stringify(dry.body.plan[0].changes)).toContain('order.paid');

    const applied = await client.post('/v1/apply', { source: 'events', schedules: [welcome] });
    expect(applied.body, JSON.stringify(applied.body)).toMatchObject({ applied: true });
    const schedule = (await client.get('/v1/schedules?name=welcome-pro')).body.items[0];
    expect(schedule).toMatchObject({ on: { event: 'order.paid', match: { 'data.plan': 'pro' } }, cron: null, every: null, at: null, nextFireAt: null, payload: { template: 'pro' } });

    const again = await client.post('/v1/apply', { source: 'events', schedules: [welcome] });
    expect(again.body.plan).toEqual([{ kind: 'schedule', name: 'welcome-pro', action: 'unchanged', changes: [] }]);
    const versions = (await client.get(`/v1/schedules/${schedule.id}/versions`)).body.items;
    expect(versions).toHaveLength(1);

    const broader = { ...welcome, on: { event: 'order.paid' } };
    const updated = await client.post('/v1/apply', { source: 'events', schedules: [broader] });
    expect(updated.body.plan).toEqual([expect.objectContaining({ name: 'welcome-pro', action: 'update', changes: expect.arrayContaining([expect.objectContaining({ field: expect.stringMatching(/^on/) })]) })]);
    expect((await client.get(`/v1/schedules/${schedule.id}`)).body.on).toEqual({ event: 'order.paid', match: {} });
    expect((await client.post('/v1/apply', { source: 'events', schedules: [broader] })).body.plan[0].action).toBe('unchanged');

    // The applied schedule runs for a matching event, as one made through POST /v1/schedules does.
    const event = await client.post('/v1/events', { name: 'order.paid', data: { plan: 'free' } });
    expect(event.status).toBe(202);
    expect(event.body.runs).toHaveLength(1);
    expect((await client.get(`/v1/runs/${event.body.runs[0]}`)).body).toMatchObject({ scheduleId: schedule.id, origin: 'event', eventId: event.body.id, payload: { template: 'pro', event: { name: 'order.paid', data: { plan: 'free' } } } });

    // A field that bounds or moves slots does not apply to it, and is refused where it stands.
    const refused = await client.post('/v1/apply', { source: 'events', schedules: [{ ...broader, calendar: { weekdaysOnly: true } }] });
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ code: 'CONFLICTING_FIELDS', field: 'schedules[0].calendar' });
    const both = await client.post('/v1/apply', { source: 'events', schedules: [{ ...broader, cron: '0 * * * *' }] });
    expect(both.status).toBe(400);
    expect((await client.get(`/v1/schedules/${schedule.id}`)).body.on).toEqual({ event: 'order.paid', match: {} });
  });

  it('declares on in the JSON Schema of an apply file (kairos schema), which checks an apply file that uses it', async () => {
    const lines: string[] = [];
    expect(await runCli(['schema'], { line: (l) => lines.push(l) }, {})).toBe(0);
    const schema = JSON.parse(lines.join('\n'));
    expect(schema.$defs.ScheduleCreateOn.properties.on).toEqual({ $ref: '#/$defs/EventTrigger' });
    expect(schema.$defs.ScheduleCreateOnSteps.properties.on).toEqual({ $ref: '#/$defs/EventTrigger' });
    expect(schema.$defs.EventTrigger).toMatchObject({ type: 'object', required: ['event'], properties: { event: expect.objectContaining({ type: 'string' }), match: expect.any(Object) } });
    // Every $ref of the schema resolves inside it, so editors and validators can use it.
    const refs = [...JSON.stringify(schema).matchAll(/"\$ref":"([^"]+)"/g)].map((m) => m[1]!);
    expect(refs.filter((ref) => !/^#\/\$defs\/[A-Za-z0-9_]+$/.test(ref) || !(ref.slice('#/$defs/'.length) in schema.$defs))).toEqual([]);
    const validate = new Ajv2020({ strict: false, validateFormats: false }).compile(schema);
    const file = { source: 'events', schedules: [{ name: 'welcome-pro', on: { event: 'order.paid', match: { 'data.plan': 'pro' } }, target }] };
    expect(validate(file), JSON.stringify(validate.errors)).toBe(true);
    expect(validate({ ...file, schedules: [{ ...file.schedules[0], on: { match: {} } }] })).toBe(false);
  });

  it('applies 1,000 schedules within 5 s', async () => {
    const started = performance.now();
    const applied = await client.post('/v1/apply', { source: 'thousand', schedules: declared(1_000, 'k') });
    const seconds = (performance.now() - started) / 1000;
    expect(applied.status).toBe(200);
    expect(await sourceCount('thousand')).toBe(1_000);
    console.log(`apply of 1,000 schedules: ${seconds.toFixed(2)} s`);
    expect(seconds).toBeLessThan(5);
  });
});

describe('kairos apply', () => {
  const { t, kairos } = useKairos({ roles: ['api'], env: { KAIROS_AUTH: 'required' } });

  async function cli(args: string[], env: Record<string, string>): Promise<{ code: number | null; output: string }> {
    const child = spawnProcess(process.execPath, [builtMain('cli'), ...args], { env: { ...process.env, ...env } });
    const code = await child.exited;
    return { code, output: child.output() };
  }

  it('plans and applies YAML and JSON files over HTTP with a key, with its exit codes', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'kairos-apply-'));
    await writeFile(
      join(dir, 'kairos.yaml'),
      ['source: billing-service', 'schedules:', '  - name: nightly-report', '    cron: "30 2 * * *"', '    timezone: Europe/Berlin', '    target: { type: handler, name: echo }', ''].join('\n'),
    );
    await writeFile(join(dir, 'more.json'), JSON.stringify({ source: 'billing-service', schedules: [{ name: 'invoice-sweep', every: '15m', target }] }));
    const key = await issueKey(t, 'default', 'read,write');
    const env = { KAIROS_URL: kairos.url, KAIROS_API_KEY: key };

    const dry = await cli(['apply', '-f', dir, '--dry-run'], env);
    expect(dry.code, dry.output).toBe(2);
    expect(dry.output).toContain('+ create schedule nightly-report');
    expect(dry.output).toContain('2 to create, 0 to update, 0 to delete, 0 unchanged: dry run, nothing applied');

    const applied = await cli(['apply', '-f', join(dir, 'kairos.yaml'), '-f', join(dir, 'more.json')], env);
    expect(applied.code, applied.output).toBe(0);
    const listed = await api(kairos.url).get('/v1/schedules');
    expect(listed.status).toBe(401);

    const again = await cli(['apply', '-f', dir, '--dry-run', '--output', 'json'], env);
    expect(again.code, again.output).toBe(0);
    expect(JSON.parse(again.output)).toMatchObject({ applied: false, plan: [{ action: 'unchanged' }, { action: 'unchanged' }] });

    await writeFile(join(dir, 'more.json'), JSON.stringify({ source: 'billing-service', schedules: [{ name: 'invoice-sweep', every: '15m', target }, { name: 'broken', cron: '61 * * * *', target }] }));
    const refused = await cli(['apply', '-f', dir], env);
    expect(refused.code).toBe(1);
    expect(refused.output).toMatch(/more\.json: schedules\[1\] \(broken\)\.cron: /);

    const unauthorized = await cli(['apply', '-f', join(dir, 'kairos.yaml')], { KAIROS_URL: kairos.url, KAIROS_API_KEY: '' });
    expect(unauthorized.code).toBe(1);
    expect(unauthorized.output).toMatch(/KAIROS_API_KEY/);

    await writeFile(join(dir, 'bad.yaml'), 'source: [unclosed');
    const unreadable = await cli(['apply', '-f', join(dir, 'bad.yaml')], env);
    expect(unreadable.code).toBe(1);
    expect(unreadable.output).toMatch(/bad\.yaml: not valid YAML/);

    const schema = await cli(['schema'], {});
    expect(schema.code).toBe(0);
    expect(JSON.parse(schema.output)).toMatchObject({ title: 'Kairos apply file', required: ['source'], $defs: { ScheduleCreate: expect.any(Object) } });
  });

  it("applies a file's calendars with its schedules that name them, and names the file of a refused calendar", async () => {
    const dir = await mkdtemp(join(tmpdir(), 'kairos-apply-calendars-'));
    await writeFile(
      join(dir, 'a-office.yaml'),
      [
        'source: office-service',
        'calendars:',
        '  - name: office-holidays',
        '    holidays: { country: DE, state: BY }',
        '    dates: ["2026-12-24", "2026-12-31"]',
        'schedules:',
        '  - name: payroll',
        '    cron: "0 9 * * *"',
        '    timezone: Europe/Berlin',
        '    calendar: { exclude: [office-holidays], weekdaysOnly: true, onExcluded: previous }',
        '    target: { type: handler, name: echo }',
        '',
      ].join('\n'),
    );
    const key = await issueKey(t, 'default', 'read,write');
    const env = { KAIROS_URL: kairos.url, KAIROS_API_KEY: key };

    const dry = await cli(['apply', '-f', dir, '--dry-run'], env);
    expect(dry.code, dry.output).toBe(2);
    expect(dry.output).toContain('+ create calendar office-holidays\n+ create schedule payroll');
    expect(dry.output).toContain('2 to create, 0 to update, 0 to delete, 0 unchanged: dry run, nothing applied');

    const applied = await cli(['apply', '-f', dir], env);
    expect(applied.code, applied.output).toBe(0);
    const stored = await t.db.query(`SELECT c.dates::text[] AS dates, c.holidays, s.calendar FROM calendars c JOIN schedules s ON s.name = 'payroll' WHERE c.name = 'office-holidays'`);
    expect(stored.rows).toEqual([
      {
        dates: ['2026-12-24', '2026-12-31'],
        holidays: { country: 'DE', state: 'BY', region: null },
        calendar: { exclude: ['office-holidays'], weekdaysOnly: true, onExcluded: 'previous' },
      },
    ]);

    await writeFile(join(dir, 'b-more.json'), JSON.stringify({ source: 'office-service', calendars: [{ name: 'broken', dates: ['2026-13-01'] }] }));
    const refused = await cli(['apply', '-f', dir], env);
    expect(refused.code).toBe(1);
    expect(refused.output).toMatch(/b-more\.json: calendars\[0\] \(broken\)\.dates/);
  });
});
