/**
 * Sensors over REST, GraphQL, the CLI and apply: declared with defaults filled in, listed, changed,
 * paused and resumed (due at once), deleted with their ticks and run keys; refused with the field
 * to fix and nothing stored; their ticks listed newest first; their cursor moved or reset with its
 * version raised (and the run keys forgotten only when asked); declared as code beside schedules.
 * Only the API runs: no evaluation loop moves what these tests look at.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, expectTypeOf, it } from 'vitest';
import type { z } from 'zod';
import { newId } from '@kairos/domain';
import type * as wire from '@kairos/domain/wire';
import type * as sdk from '@kairos/sdk';
import { runCli } from '../../apps/cli/src/cli.js';
import { issueKey, useKairos } from '../support/kairos.js';

const echo = { type: 'handler', name: 'echo' };
const body = (name: string, extra: Record<string, unknown> = {}) => ({ name, every: '30s', target: echo, run: { target: echo }, ...extra });

describe('sensors', () => {
  const { t, kairos, client } = useKairos({ roles: ['api'] });

  const count = async (table: string): Promise<number> => (await t.db.query(`SELECT count(*)::int AS n FROM ${table}`)).rows[0].n;

  it('creates a sensor with its defaults, due at once, and lists, reads, changes, pauses, resumes and deletes it', async () => {
    const created = await client.post(
      '/v1/sensors',
      body('new-files', { payload: { bucket: 'in' }, labels: { team: 'data' }, run: { target: { type: 'handler', name: 'noop' }, concurrency: { key: 'file-{{payload.name}}' } } }),
    );
    expect(created.status).toBe(201);
    const sensor = created.body;
    expect(sensor).toMatchObject({
      name: 'new-files',
      every: '30s',
      target: { type: 'handler', name: 'echo', queue: 'default' },
      timeout: '1m',
      run: {
        target: { type: 'handler', name: 'noop', queue: 'default' },
        steps: null,
        retry: { maxAttempts: 3 },
        timeout: '5m',
        concurrency: { key: 'file-{{payload.name}}', limit: 1 },
      },
      payload: { bucket: 'in' },
      paused: false,
      labels: { team: 'data' },
      cursor: null,
      cursorVersion: 0,
      evaluating: false,
      lastTick: null,
      source: null,
    });
    expect(Date.parse(sensor.nextEvaluationAt)).toBeLessThanOrEqual(Date.now() + 1_000);
    const row = (await t.db.query(`SELECT every_ms, timeout_ms, run, source FROM sensors WHERE id = $1`, [sensor.id])).rows[0];
    expect(row).toMatchObject({ every_ms: 30_000, timeout_ms: 60_000, source: null, run: { timeoutMs: 300_000, concurrency: { key: 'file-{{payload.name}}', limit: 1 } } });

    const steps = await client.post('/v1/sensors', body('with-steps', { paused: true, timeout: '10s', run: { steps: [{ name: 'a', target: echo }, { name: 'b', dependsOn: ['a'], target: echo }] } }));
    expect(steps.status).toBe(201);
    expect(steps.body).toMatchObject({ paused: true, nextEvaluationAt: null, timeout: '10s', run: { target: null, steps: [{ name: 'a' }, { name: 'b', dependsOn: ['a'] }] } });

    const page = await client.get('/v1/sensors?limit=1');
    expect(page.body.items.map((s: { name: string }) => s.name)).toEqual(['with-steps']);
    const next = await client.get(`/v1/sensors?limit=1&cursor=${page.body.nextCursor}`);
    expect(next.body).toEqual({ items: [sensor], nextCursor: null });
    expect((await client.get('/v1/sensors?limit=0')).body).toMatchObject({ code: 'VALIDATION_FAILED', field: 'limit' });
    expect((await client.get('/v1/sensors?cursor=Zm9v')).body.code).toBe('INVALID_CURSOR');
    expect((await client.get(`/v1/sensors/${sensor.id}`)).body).toEqual(sensor);

    // PATCH replaces the fields it gives (`run` field by field), renames, and leaves the cursor alone.
    await t.db.query(`UPDATE sensors SET cursor = '{"at": 7}', cursor_version = 4 WHERE id = $1`, [sensor.id]);
    const patched = await client.patch(`/v1/sensors/${sensor.id}`, { name: 'new-files-2', every: '1m', run: { retry: { maxAttempts: 5 } }, labels: null });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({
      id: sensor.id,
      name: 'new-files-2',
      every: '1m',
      run: { target: { name: 'noop' }, retry: { maxAttempts: 5 }, concurrency: { key: 'file-{{payload.name}}' } },
      payload: { bucket: 'in' },
      labels: {},
      cursor: { at: 7 },
      cursorVersion: 4,
    });
    const swapped = await client.patch(`/v1/sensors/${sensor.id}`, { run: { steps: [{ name: 'only', target: echo }] }, paused: true });
    expect(swapped.body).toMatchObject({ paused: true, nextEvaluationAt: null, run: { target: null, steps: [{ name: 'only' }], retry: { maxAttempts: 5 } } });
    const same = await client.patch(`/v1/sensors/${sensor.id}`, { every: '60s' });
    expect(same.body.updatedAt).toBe(swapped.body.updatedAt);

    // Pausing twice changes nothing; a resumed sensor is due at once.
    await t.db.query(`UPDATE sensors SET next_evaluation_at = now() + interval '1 hour' WHERE id = $1`, [sensor.id]);
    expect((await client.post(`/v1/sensors/${sensor.id}/pause`)).body.paused).toBe(true);
    const resumed = await client.post(`/v1/sensors/${sensor.id}/resume`);
    expect(resumed.status).toBe(200);
    expect(resumed.body.paused).toBe(false);
    expect(Date.parse(resumed.body.nextEvaluationAt)).toBeLessThanOrEqual(Date.now() + 1_000);
    expect((await client.post(`/v1/sensors/${sensor.id}/resume`)).body.nextEvaluationAt).toBe(resumed.body.nextEvaluationAt);

    // Delete takes the ticks and run keys with it; runs it made stay.
    await t.db.query(
      `INSERT INTO sensor_ticks (id, sensor_id, evaluation_run_id, state, cursor_version) VALUES ($1, $2, $3, 'evaluating', 4)`,
      [newId(), sensor.id, newId()],
    );
    await t.db.query(`INSERT INTO sensor_run_keys (sensor_id, run_key, run_id) VALUES ($1, 'k', $2)`, [sensor.id, newId()]);
    expect((await client.delete(`/v1/sensors/${sensor.id}`)).status).toBe(204);
    expect((await client.get(`/v1/sensors/${sensor.id}`)).status).toBe(404);
    expect((await t.db.query(`SELECT count(*)::int AS n FROM sensor_ticks WHERE sensor_id = $1`, [sensor.id])).rows[0].n).toBe(0);
    expect((await t.db.query(`SELECT count(*)::int AS n FROM sensor_run_keys WHERE sensor_id = $1`, [sensor.id])).rows[0].n).toBe(0);
    expect((await client.delete(`/v1/sensors/${sensor.id}`)).status).toBe(404);
  });

  it('refuses an invalid sensor with the field to fix, storing nothing', async () => {
    const before = await count('sensors');
    const steps = [{ name: 'a', target: echo }];
    for (const [sent, code, field] of [
      [{ name: 'x', target: echo, run: { target: echo } }, 'MISSING_FIELD', 'every'],
      [body('x', { every: '500ms' }), 'INVALID_DURATION', 'every'],
      [body('x', { timeout: '2h' }), 'INVALID_DURATION', 'timeout'],
      [body('x', { target: { type: 'http', url: 'https://example.com/hook' } }), 'INVALID_TARGET', 'target'],
      [body('x', { target: { type: 'handler', name: 'nobody-has-it' } }), 'UNKNOWN_HANDLER', 'target.name'],
      [body('x', { run: { target: echo, steps } }), 'VALIDATION_FAILED', 'run.steps'],
      [body('x', { run: {} }), 'MISSING_FIELD', 'run.target'],
      [body('x', { run: undefined }), 'MISSING_FIELD', 'run'],
      [body('x', { run: { target: { type: 'handler', name: 'nobody-has-it' } } }), 'UNKNOWN_HANDLER', 'run.target.name'],
      [body('x', { run: { steps: [{ name: 'a', target: { type: 'handler', name: 'nobody' } }] } }), 'UNKNOWN_HANDLER', 'run.steps[0].target.name'],
      [body('x', { run: { target: echo, concurrency: { key: 'c-{{customer}}' } } }), 'VALIDATION_FAILED', 'run.concurrency.key'],
      [body('x', { run: { target: echo, concurrency: { key: 'c', limit: 0 } } }), 'VALIDATION_FAILED', 'run.concurrency.limit'],
      [body('x', { run: { target: echo, surprise: 1 } }), 'UNKNOWN_FIELD', 'run.surprise'],
      [body('x', { cursor: 1 }), 'UNKNOWN_FIELD', 'cursor'],
      [body('x y'), 'VALIDATION_FAILED', 'name'],
      [body('x', { labels: { team: 7 } }), 'VALIDATION_FAILED', 'labels.team'],
    ] as const) {
      const answer = await client.post('/v1/sensors', sent);
      expect(answer.status, JSON.stringify(sent)).toBe(400);
      expect(answer.body, JSON.stringify(sent)).toMatchObject({ code, field });
    }
    expect(await count('sensors')).toBe(before);

    // A taken name is a conflict, on create and on rename; both store nothing.
    const first = (await client.post('/v1/sensors', body('taken'))).body;
    const other = (await client.post('/v1/sensors', body('other'))).body;
    expect((await client.post('/v1/sensors', body('taken'))).body).toMatchObject({ code: 'CONFLICT', field: 'name' });
    expect((await client.patch(`/v1/sensors/${other.id}`, { name: 'taken' })).status).toBe(409);
    expect((await client.patch(`/v1/sensors/${other.id}`, { every: '1s', target: { type: 'http', url: 'https://example.com' } })).body).toMatchObject({ code: 'INVALID_TARGET', field: 'target' });
    expect((await client.patch(`/v1/sensors/${other.id}`, { run: { target: null } })).body).toMatchObject({ code: 'MISSING_FIELD', field: 'run.target' });
    expect((await client.patch(`/v1/sensors/${other.id}`, { cursor: 1 })).body).toMatchObject({ code: 'UNKNOWN_FIELD', field: 'cursor' });
    expect((await client.get(`/v1/sensors/${other.id}`)).body).toMatchObject({ name: 'other', every: '30s' });
    expect(first.name).toBe('taken');

    const unknown = newId();
    for (const [verb, path, sent] of [
      ['get', `/v1/sensors/${unknown}`],
      ['get', '/v1/sensors/not-a-uuid'],
      ['get', `/v1/sensors/${unknown}/ticks`],
      ['patch', `/v1/sensors/${unknown}`, { every: '1m' }],
      ['post', `/v1/sensors/${unknown}/pause`],
      ['post', `/v1/sensors/${unknown}/resume`],
      ['post', `/v1/sensors/${unknown}/cursor`, { cursor: 1 }],
      ['post', `/v1/sensors/${unknown}/reset`, {}],
      ['delete', `/v1/sensors/${unknown}`],
    ] as const) {
      const answer = verb === 'get' || verb === 'delete' ? await client[verb](path) : await client[verb](path, sent);
      expect(answer.status, `${verb} ${path}`).toBe(404);
      expect(answer.body.code).toBe('NOT_FOUND');
    }
  });

  it('lists its ticks newest first, a page at a time, and shows the newest on the sensor', async () => {
    const sensor = (await client.post('/v1/sensors', body('ticking'))).body;
    const base = Date.parse('2026-03-01T10:00:00Z');
    const ids = Array.from({ length: 5 }, () => newId());
    const runIds = [newId(), newId()];
    for (const [i, id] of ids.entries()) {
      const evaluating = i === 4;
      await t.db.query(
        `INSERT INTO sensor_ticks (id, sensor_id, evaluation_run_id, state, cursor_version, cursor_before, cursor_after, requested, created,
                                   deduplicated, run_ids, reason_code, reason_text, started_at, finished_at)
         VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7::jsonb, $8, $9, $10, $11::uuid[], $12, $13, $14, $15)`,
        [
          id,
          sensor.id,
          newId(),
          evaluating ? 'evaluating' : i === 3 ? 'failed' : 'succeeded',
          i,
          JSON.stringify({ n: i }),
          evaluating || i === 3 ? null : JSON.stringify({ n: i + 1 }),
          2,
          i === 3 ? 0 : 1,
          i === 3 ? 0 : 1,
          i === 2 ? runIds : [],
          i === 3 ? 'SENSOR_EVALUATION_FAILED' : null,
          i === 3 ? 'the evaluation run did not succeed' : null,
          new Date(base + Math.min(i, 3) * 1_000),
          evaluating ? null : new Date(base + i * 1_000 + 250),
        ],
      );
    }
    // Tick 4 starts a microsecond after tick 3, in the same millisecond: the page cursor still tells them apart.
    await t.db.query(`UPDATE sensor_ticks SET started_at = (SELECT started_at FROM sensor_ticks WHERE id = $2) + interval '1 microsecond' WHERE id = $1`, [ids[4], ids[3]]);

    const first = await client.get(`/v1/sensors/${sensor.id}/ticks?limit=2`);
    expect(first.status).toBe(200);
    expect(first.body.items.map((tick: { id: string }) => tick.id)).toEqual([ids[4], ids[3]]);
    expect(first.body.items[0]).toMatchObject({ state: 'evaluating', finishedAt: null, durationMs: null, cursorBefore: { n: 4 }, cursorAfter: null });
    expect(first.body.items[1]).toMatchObject({
      sensorId: sensor.id,
      state: 'failed',
      requested: 2,
      created: 0,
      reasonCode: 'SENSOR_EVALUATION_FAILED',
      reason: 'the evaluation run did not succeed',
      durationMs: 250,
    });
    const second = await client.get(`/v1/sensors/${sensor.id}/ticks?limit=2&cursor=${first.body.nextCursor}`);
    expect(second.body.items.map((tick: { id: string }) => tick.id)).toEqual([ids[2], ids[1]]);
    expect(second.body.items[0]).toMatchObject({ state: 'succeeded', runIds, created: 1, deduplicated: 1, cursorAfter: { n: 3 }, finishedAt: '2026-03-01T10:00:02.250Z' });
    const third = await client.get(`/v1/sensors/${sensor.id}/ticks?limit=2&cursor=${second.body.nextCursor}`);
    expect(third.body).toMatchObject({ items: [{ id: ids[0] }], nextCursor: null });
    expect((await client.get(`/v1/sensors/${sensor.id}/ticks?cursor=Zm9v`)).body.code).toBe('INVALID_CURSOR');

    const view = (await client.get(`/v1/sensors/${sensor.id}`)).body;
    expect(view.lastTick).toEqual(first.body.items[0]);
    await t.db.query(`UPDATE sensors SET evaluation_run_id = $2 WHERE id = $1`, [sensor.id, first.body.items[0].runId]);
    expect((await client.get('/v1/sensors')).body.items.find((s: { id: string }) => s.id === sensor.id)).toMatchObject({ evaluating: true, lastTick: { id: ids[4] } });
  });

  it('moves and resets the cursor, raising its version, and forgets run keys only when asked', async () => {
    const sensor = (await client.post('/v1/sensors', body('cursors'))).body;
    const keys = async () => (await t.db.query(`SELECT count(*)::int AS n FROM sensor_run_keys WHERE sensor_id = $1`, [sensor.id])).rows[0].n;
    await t.db.query(`INSERT INTO sensor_run_keys (sensor_id, run_key, run_id) VALUES ($1, 'a', $2), ($1, 'b', $3)`, [sensor.id, newId(), newId()]);

    const moved = await client.post(`/v1/sensors/${sensor.id}/cursor`, { cursor: { after: 'file-9' } });
    expect(moved.status).toBe(200);
    expect(moved.body).toMatchObject({ cursor: { after: 'file-9' }, cursorVersion: 1 });
    expect((await client.post(`/v1/sensors/${sensor.id}/cursor`, { cursor: 'plain text' })).body).toMatchObject({ cursor: 'plain text', cursorVersion: 2 });
    expect((await client.post(`/v1/sensors/${sensor.id}/cursor`, { cursor: null })).body).toMatchObject({ cursor: null, cursorVersion: 3 });
    expect((await client.post(`/v1/sensors/${sensor.id}/cursor`, {})).body).toMatchObject({ code: 'MISSING_FIELD', field: 'cursor' });
    expect((await client.post(`/v1/sensors/${sensor.id}/cursor`, { cursor: 1, version: 2 })).body).toMatchObject({ code: 'UNKNOWN_FIELD', field: 'version' });
    expect((await client.get(`/v1/sensors/${sensor.id}`)).body.cursorVersion).toBe(3);
    expect(await keys()).toBe(2);

    const reset = await client.post(`/v1/sensors/${sensor.id}/reset`, { cursor: [1, 2] });
    expect(reset.status).toBe(200);
    expect(reset.body).toMatchObject({ cursor: [1, 2], cursorVersion: 4 });
    expect(await keys()).toBe(2);
    expect((await client.post(`/v1/sensors/${sensor.id}/reset`, { forgetRunKeys: false })).body).toMatchObject({ cursor: null, cursorVersion: 5 });
    expect(await keys()).toBe(2);
    expect((await client.post(`/v1/sensors/${sensor.id}/reset`, { forgetRunKeys: 'yes' })).body).toMatchObject({ code: 'VALIDATION_FAILED', field: 'forgetRunKeys' });
    const forgotten = await client.post(`/v1/sensors/${sensor.id}/reset`, { cursor: { from: 0 }, forgetRunKeys: true });
    expect(forgotten.body).toMatchObject({ cursor: { from: 0 }, cursorVersion: 6 });
    expect(await keys()).toBe(0);
    expect((await client.post(`/v1/sensors/${sensor.id}/reset`)).body).toMatchObject({ cursor: null, cursorVersion: 7 });
  });

  it('keeps to the caller namespace and scopes', async () => {
    const sensor = (await client.post('/v1/sensors', body('scoped'))).body;
    const call = (key: string, method: string, path: string, sent?: unknown) =>
      fetch(`${kairos.url}${path}`, {
        method,
        headers: { authorization: `Bearer ${key}`, ...(method === 'GET' ? {} : { 'content-type': 'application/json' }) },
        body: sent === undefined ? undefined : JSON.stringify(sent),
      });
    // A read key of the open default namespace may write there (never less than no key): the scopes are checked elsewhere.
    const writer = await issueKey(t, 'elsewhere', 'read,write');
    const reader = await issueKey(t, 'elsewhere', 'read');
    expect((await call(writer, 'GET', `/v1/sensors/${sensor.id}`)).status).toBe(404);
    expect(((await (await call(writer, 'GET', '/v1/sensors')).json()) as { items: unknown[] }).items).toEqual([]);
    expect((await call(writer, 'POST', `/v1/sensors/${sensor.id}/pause`)).status).toBe(404);
    // The same name is free in another namespace.
    const theirs = (await (await call(writer, 'POST', '/v1/sensors', body('scoped'))).json()) as { id: string; name: string };
    expect(theirs.name).toBe('scoped');
    expect((await call(reader, 'GET', `/v1/sensors/${theirs.id}`)).status).toBe(200);
    expect((await call(reader, 'GET', `/v1/sensors/${theirs.id}/ticks`)).status).toBe(200);
    for (const [method, path, sent] of [
      ['POST', '/v1/sensors', body('by-reader')],
      ['PATCH', `/v1/sensors/${theirs.id}`, { every: '1m' }],
      ['POST', `/v1/sensors/${theirs.id}/pause`, undefined],
      ['POST', `/v1/sensors/${theirs.id}/cursor`, { cursor: 1 }],
      ['POST', `/v1/sensors/${theirs.id}/reset`, {}],
      ['DELETE', `/v1/sensors/${theirs.id}`, undefined],
    ] as const) {
      const answer = await call(reader, method, path, sent);
      expect(answer.status, `${method} ${path}`).toBe(403);
      expect(((await answer.json()) as { code: string }).code).toBe('FORBIDDEN');
    }
    expect((await client.get(`/v1/sensors/${sensor.id}`)).body.paused).toBe(false);
  });

  it('mirrors REST in GraphQL', async () => {
    const gql = async (query: string, variables: Record<string, unknown> = {}) => (await client.post('/graphql', { query, variables })).body;
    const fields = `id name every target timeout run { target steps { name } retry { maxAttempts backoff { type base max jitter } } timeout concurrency { key limit } priority fairness { key weight } } payload paused labels
      cursor cursorVersion nextEvaluationAt evaluating lastTick { id state } source createdAt updatedAt`;
    const created = await gql(`mutation ($input: JSON!) { createSensor(input: $input) { ${fields} } }`, {
      input: body('graphql', { run: { target: echo, concurrency: { key: 'k-{{payload}}', limit: 2 } } }),
    });
    expect(created.errors).toBeUndefined();
    const sensor = created.data.createSensor;
    expect(sensor).toEqual((await client.get(`/v1/sensors/${sensor.id}`)).body);

    const read = await gql(`query ($id: ID!) { sensor(id: $id) { name } sensors(limit: 100) { items { id } nextCursor } sensorTicks(id: $id) { items { id } nextCursor } }`, { id: sensor.id });
    expect(read.data.sensor.name).toBe('graphql');
    expect(read.data.sensors.items.map((s: { id: string }) => s.id)).toContain(sensor.id);
    expect(read.data.sensorTicks).toEqual({ items: [], nextCursor: null });

    const changed = await gql(
      `mutation ($id: ID!) {
        updateSensor(id: $id, input: { every: "2m" }) { every }
        pauseSensor(id: $id) { paused }
        resumeSensor(id: $id) { paused }
        setSensorCursor(id: $id, cursor: { page: 2 }) { cursor cursorVersion }
        resetSensor(id: $id, forgetRunKeys: true) { cursor cursorVersion }
      }`,
      { id: sensor.id },
    );
    expect(changed.errors).toBeUndefined();
    expect(changed.data).toEqual({
      updateSensor: { every: '2m' },
      pauseSensor: { paused: true },
      resumeSensor: { paused: false },
      setSensorCursor: { cursor: { page: 2 }, cursorVersion: 1 },
      resetSensor: { cursor: null, cursorVersion: 2 },
    });

    const refused = await gql(`mutation ($input: JSON!) { createSensor(input: $input) { id } }`, { input: body('graphql-http', { target: { type: 'http', url: 'https://example.com' } }) });
    expect(refused.errors[0].extensions).toMatchObject({ code: 'INVALID_TARGET', field: 'target', status: 400 });
    const missing = await gql(`mutation ($id: ID!) { setSensorCursor(id: $id) { id } }`, { id: sensor.id });
    expect(missing.errors[0].extensions).toMatchObject({ code: 'MISSING_FIELD', field: 'cursor' });
    expect((await gql(`mutation ($id: ID!) { deleteSensor(id: $id) }`, { id: sensor.id })).data).toEqual({ deleteSensor: true });
    expect((await gql(`query ($id: ID!) { sensor(id: $id) { id } }`, { id: sensor.id })).errors[0].extensions).toMatchObject({ code: 'NOT_FOUND', status: 404 });
  });

  it('is operated from the command line through the API', async () => {
    const sensor = (await client.post('/v1/sensors', body('from-cli'))).body;
    await t.db.query(`INSERT INTO sensor_run_keys (sensor_id, run_key, run_id) VALUES ($1, 'a', $2)`, [sensor.id, newId()]);
    const env = { KAIROS_URL: kairos.url };
    const cli = async (...args: string[]) => {
      const lines: string[] = [];
      const code = await runCli(args, { line: (l) => lines.push(l) }, env);
      return { code, text: lines.join('\n') };
    };
    const listed = await cli('sensors');
    expect(listed.code).toBe(0);
    expect(listed.text).toMatch(/^id\s+name\s+every\s+evaluator\s+state/);
    expect(listed.text).toContain('from-cli');
    expect(JSON.parse((await cli('sensors', '--output', 'json')).text).some((s: { id: string }) => s.id === sensor.id)).toBe(true);
    expect((await cli('sensors', 'get', sensor.id)).text).toContain('sensor from-cli');
    expect((await cli('sensors', 'ticks', sensor.id)).text).toMatch(/^started\s+state/);
    expect((await cli('sensors', 'pause', sensor.id)).text).toContain('paused sensor from-cli');
    expect((await cli('sensors', 'resume', sensor.id, '--json')).text).toContain('"paused": false');
    expect((await cli('sensors', 'cursor', sensor.id, '{"after":"x"}')).text).toContain('moved the cursor of sensor from-cli to {"after":"x"} (version 1)');
    expect((await cli('sensors', 'reset', sensor.id, '--cursor', '3')).text).toContain('to cursor 3 (version 2)');
    expect((await t.db.query(`SELECT count(*)::int AS n FROM sensor_run_keys WHERE sensor_id = $1`, [sensor.id])).rows[0].n).toBe(1);
    expect((await cli('sensors', 'reset', sensor.id, '--forget-run-keys')).text).toContain('its run keys were forgotten');
    expect((await t.db.query(`SELECT count(*)::int AS n FROM sensor_run_keys WHERE sensor_id = $1`, [sensor.id])).rows[0].n).toBe(0);
    await expect(cli('sensors', 'get', newId())).rejects.toThrow(/does not exist/);
    await expect(cli('sensors', 'cursor', sensor.id, 'not json')).rejects.toThrow(/must be JSON/);
    await expect(cli('sensors', 'poke', sensor.id)).rejects.toThrow(/use: kairos sensors/);
  });

  it('is declared as code beside schedules: create, unchanged, update, prune', async () => {
    const sensors = [body('decl-a', { payload: { n: 1 } }), body('decl-b', { run: { steps: [{ name: 's', target: { type: 'http', url: 'https://example.com/hook', headers: { b: '2', a: '1' } } }] } })];
    const schedules = [{ name: 'decl-schedule', every: '1h', target: echo }];
    const dry = await client.post('/v1/apply', { source: 'sensing', schedules, sensors, dryRun: true });
    expect(dry.status).toBe(200);
    expect(dry.body.applied).toBe(false);
    expect(dry.body.plan.map((p: { kind: string; name: string; action: string }) => `${p.kind} ${p.name} ${p.action}`)).toEqual([
      'schedule decl-schedule create',
      'sensor decl-a create',
      'sensor decl-b create',
    ]);
    expect(dry.body.plan[1].changes).toContainEqual({ field: 'every', from: null, to: '30s' });
    expect((await t.db.query(`SELECT count(*)::int AS n FROM sensors WHERE source = 'sensing'`)).rows[0].n).toBe(0);

    expect((await client.post('/v1/apply', { source: 'sensing', schedules, sensors })).body.applied).toBe(true);
    const rows = (await t.db.query(`SELECT id, name, source, updated_at FROM sensors WHERE source = 'sensing' ORDER BY name`)).rows;
    expect(rows.map((r) => r.name)).toEqual(['decl-a', 'decl-b']);
    expect((await client.get(`/v1/sensors/${rows[0].id}`)).body).toMatchObject({ source: 'sensing', paused: false, payload: { n: 1 } });

    const again = await client.post('/v1/apply', { source: 'sensing', schedules, sensors });
    expect(again.body.plan.map((p: { action: string }) => p.action)).toEqual(['unchanged', 'unchanged', 'unchanged']);
    expect((await t.db.query(`SELECT id, name, source, updated_at FROM sensors WHERE source = 'sensing' ORDER BY name`)).rows).toEqual(rows);

    // An update keeps the id and the cursor; a change by hand shows as drift.
    await client.post(`/v1/sensors/${rows[0].id}/cursor`, { cursor: 'kept' });
    const changed = [{ ...sensors[0]!, every: '1m', payload: { n: 2 } }, sensors[1]!];
    const update = await client.post('/v1/apply', { source: 'sensing', schedules, sensors: changed });
    expect(update.body.plan[1]).toEqual({
      kind: 'sensor',
      name: 'decl-a',
      action: 'update',
      changes: [
        { field: 'every', from: '30s', to: '1m' },
        { field: 'payload', from: { n: 1 }, to: { n: 2 } },
      ],
    });
    expect((await client.get(`/v1/sensors/${rows[0].id}`)).body).toMatchObject({ id: rows[0].id, every: '1m', cursor: 'kept', cursorVersion: 1 });

    // A sensor made by hand is taken over by the source that declares it; prune deletes only the source's own.
    const byHand = (await client.post('/v1/sensors', body('by-hand'))).body;
    const takeover = await client.post('/v1/apply', { source: 'sensing', sensors: [changed[0], body('by-hand')], dryRun: true });
    expect(takeover.body.plan.find((p: { name: string }) => p.name === 'by-hand')).toMatchObject({ action: 'update', changes: [{ field: 'source', from: null, to: 'sensing' }] });
    const pruned = await client.post('/v1/apply', { source: 'sensing', schedules, sensors: [changed[0]], prune: true });
    expect(pruned.body.plan.map((p: { kind: string; name: string; action: string }) => `${p.kind} ${p.name} ${p.action}`)).toEqual([
      'schedule decl-schedule unchanged',
      'sensor decl-a unchanged',
      'sensor decl-b delete',
    ]);
    expect((await t.db.query(`SELECT name FROM sensors WHERE source = 'sensing'`)).rows.map((r) => r.name)).toEqual(['decl-a']);
    expect((await client.get(`/v1/sensors/${byHand.id}`)).status).toBe(200);

    // One invalid sensor refuses the whole apply, saying where; paused is an operation, not a declaration.
    for (const [sent, code, field] of [
      [[changed[0], body('bad', { every: '1ms' })], 'INVALID_DURATION', 'sensors[1].every'],
      [[body('bad', { paused: true })], 'UNKNOWN_FIELD', 'sensors[0].paused'],
      [[body('twice'), body('twice')], 'CONFLICTING_FIELDS', 'sensors[1].name'],
      [[{ every: '1m', target: echo, run: { target: echo } }], 'MISSING_FIELD', 'sensors[0].name'],
      ['many', 'VALIDATION_FAILED', 'sensors'],
    ] as const) {
      const refused = await client.post('/v1/apply', { source: 'sensing', sensors: sent, prune: true });
      expect(refused.status, JSON.stringify(sent)).toBe(400);
      expect(refused.body, JSON.stringify(sent)).toMatchObject({ code, field });
    }
    expect(((await client.post('/v1/apply', { source: 'sensing', sensors: [body('bad', { every: '1ms' })] })).body.message as string).startsWith('sensors[0] (bad).every: ')).toBe(true);
    expect((await t.db.query(`SELECT name FROM sensors WHERE source = 'sensing'`)).rows.map((r) => r.name)).toEqual(['decl-a']);
  });

  it('is applied from files by the command line, with its exit codes', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'kairos-sensors-'));
    const file = join(dir, 'kairos.yaml');
    const env = { KAIROS_URL: kairos.url };
    const cli = async (...args: string[]) => {
      const lines: string[] = [];
      const code = await runCli(args, { line: (l) => lines.push(l) }, env);
      return { code, text: lines.join('\n') };
    };
    await writeFile(
      file,
      ['source: files', 'sensors:', '  - name: file-sensor', '    every: 45s', '    target: { type: handler, name: echo }', '    run: { target: { type: handler, name: noop } }'].join('\n'),
    );
    const dry = await cli('apply', '-f', file, '--dry-run');
    expect(dry).toEqual({ code: 2, text: '+ create sensor file-sensor\n1 to create, 0 to update, 0 to delete, 0 unchanged: dry run, nothing applied' });
    expect((await cli('apply', '-f', file)).code).toBe(0);
    expect((await cli('apply', '-f', file, '--dry-run')).code).toBe(0);
    expect((await client.get('/v1/sensors?limit=500')).body.items.find((s: { name: string }) => s.name === 'file-sensor')).toMatchObject({ every: '45s', source: 'files' });
    await writeFile(file, ['source: files', 'sensors:', '  - name: file-sensor', '    every: 10ms', '    target: { type: handler, name: echo }', '    run: { target: { type: handler, name: noop } }'].join('\n'));
    await expect(cli('apply', '-f', file)).rejects.toThrow(`${file}: sensors[0] (file-sensor).every: `);
    expect(JSON.parse((await cli('schema')).text).properties.sensors.items).toEqual({ $ref: '#/$defs/SensorCreate' });
  });

  it('types the SDK client after the wire declarations', () => {
    type Fits<A, B> = [A] extends [B] ? true : false;
    expectTypeOf<Fits<z.output<typeof wire.SensorView>, sdk.Sensor>>().toEqualTypeOf<true>();
    expectTypeOf<Fits<z.output<typeof wire.SensorTickPage>, sdk.Page<sdk.SensorTick>>>().toEqualTypeOf<true>();
    expectTypeOf<Fits<z.output<typeof wire.SensorPage>, sdk.Page<sdk.Sensor>>>().toEqualTypeOf<true>();
  });
});
