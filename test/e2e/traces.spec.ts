/**
 * Traces, all roles in one process with an in-memory exporter: a schedule's HTTP delivery carries a
 * `traceparent` of the trace its tick started, and the span tree tick → dispatch → claim → execute
 * → verdict is exported with its parent links; an ad-hoc run continues the trace of the API
 * request that created it (and of the caller's own `traceparent`), even when Redis lost its job;
 * an SDK handler sees the trace context and its own spans nest under the execution span.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseTraceparent } from '@kairos/domain';
import { type StartedKairos } from '@kairos/process';
import { addSpanProcessor } from '@kairos/telemetry';
import { KairosWorker, type HandlerContext } from '../../packages/sdk/src/index.js';
import { api, runsQueue, startInProcess, testEnvironment, waitFor, type TestEnvironment } from '../support/kairos.js';

const exporter = new InMemorySpanExporter();

interface Delivery {
  traceparent: string | undefined;
  tracestate: string | undefined;
  runId: string;
}

describe('traces', () => {
  let t: TestEnvironment;
  let kairos: StartedKairos;
  let client: ReturnType<typeof api>;
  let server: http.Server;
  let base: string;
  let worker: KairosWorker;
  const deliveries: Delivery[] = [];
  const handled: { context: HandlerContext; activeSpanId: string | undefined }[] = [];

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        deliveries.push({ traceparent: req.headers.traceparent as string | undefined, tracestate: req.headers.tracestate as string | undefined, runId: JSON.parse(body).runId });
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    addSpanProcessor(new SimpleSpanProcessor(exporter));
    t = await testEnvironment();
    kairos = await startInProcess(t.env({ KAIROS_HTTP_ALLOWLIST: '127.0.0.1' }));
    client = api(kairos.url);
    worker = new KairosWorker({
      databaseUrl: t.databaseUrl,
      redisUrl: t.transport.kind === 'redis' ? t.transport.url : null,
      queuePrefix: t.redisPrefix,
      queue: 'traced',
      handlers: {
        traced: async (context) => {
          // A user's own span, started the usual way, with no parent given: it must nest under the run's.
          trace.getTracer('user-code').startSpan('user.work').end();
          handled.push({ context, activeSpanId: trace.getActiveSpan()?.spanContext().spanId });
          return { ok: true };
        },
      },
      logger: { log: () => undefined, warn: () => undefined, error: () => undefined },
    });
    await worker.start();
  });

  afterAll(async () => {
    await worker?.stop();
    await kairos?.app.close();
    await t?.cleanup();
    server?.closeAllConnections();
    await new Promise((r) => server?.close(r));
  });

  const spansOf = (traceId: string) => exporter.getFinishedSpans().filter((s) => s.spanContext().traceId === traceId);
  const one = (spans: ReadableSpan[], name: string, runId?: string): ReadableSpan => {
    const found = spans.filter((s) => s.name === name && (runId === undefined || s.attributes['kairos.run.id'] === runId));
    expect(found, `one ${name} span`).toHaveLength(1);
    return found[0]!;
  };
  const parentOf = (span: ReadableSpan) => span.parentSpanContext?.spanId;
  /** Waits until the run's verdict span is exported: the verdict is written behind the job. */
  const verdictOf = (runId: string) =>
    waitFor(async () => exporter.getFinishedSpans().find((s) => s.name === 'kairos.verdict' && s.attributes['kairos.run.id'] === runId), `the verdict span of ${runId}`);

  it('follows a scheduled run from its tick into the HTTP target', async () => {
    const created = await client.post('/v1/schedules', { name: 'traced', every: '1s', target: { type: 'http', url: `${base}/hook` } });
    expect(created.status).toBe(201);
    const delivery = await waitFor(async () => deliveries[0], 'the first delivery');
    await client.post(`/v1/schedules/${created.body.id}/pause`);

    const ids = parseTraceparent(delivery.traceparent);
    expect(ids, `a valid traceparent: ${delivery.traceparent}`).not.toBeNull();
    expect(ids!.traceFlags & 1).toBe(1);
    await verdictOf(delivery.runId);
    const spans = spansOf(ids!.traceId);

    const tick = one(spans, 'kairos.tick');
    expect(parentOf(tick)).toBeUndefined();
    expect(tick.attributes).toMatchObject({ 'kairos.tick.schedules': 1, 'kairos.tick.ticks': 1, 'kairos.tick.runs': 1 });
    const dispatch = one(spans, 'kairos.dispatch');
    expect(dispatch.kind).toBe(SpanKind.PRODUCER);
    expect(parentOf(dispatch)).toBe(tick.spanContext().spanId);
    const claim = one(spans, 'kairos.claim', delivery.runId);
    expect(claim.kind).toBe(SpanKind.CONSUMER);
    expect(claim.attributes).toMatchObject({ 'kairos.claim.outcome': 'claimed', 'kairos.run.attempt': 1 });
    expect(parentOf(claim)).toBe(dispatch.spanContext().spanId);
    const execute = one(spans, 'kairos.execute', delivery.runId);
    expect(execute.attributes).toMatchObject({ 'kairos.target.type': 'http', 'kairos.outcome': 'succeeded' });
    expect(parentOf(execute)).toBe(claim.spanContext().spanId);
    // The delivery carries the execution span itself: the receiver's spans are its children.
    expect(ids!.spanId).toBe(execute.spanContext().spanId);
    const verdict = one(spans, 'kairos.verdict', delivery.runId);
    expect(parentOf(verdict)).toBe(execute.spanContext().spanId);
    expect(verdict.attributes).toMatchObject({ 'kairos.verdict.state': 'succeeded', 'kairos.reason_code': 'SUCCEEDED', 'kairos.verdict.written': true });

    // The run recorded the tick durably, so a worker continues the trace even without the job's hint.
    const { rows } = await t.db.query('SELECT trace_parent FROM runs WHERE id = $1', [delivery.runId]);
    expect(parseTraceparent(rows[0].trace_parent)).toMatchObject({ traceId: ids!.traceId, spanId: tick.spanContext().spanId });

    // The create was an API request span of its own, named after its route.
    const request = exporter.getFinishedSpans().find((s) => s.name === 'POST /v1/schedules');
    expect(request).toBeDefined();
    expect(request!.kind).toBe(SpanKind.SERVER);
    expect(request!.attributes).toMatchObject({ 'http.route': '/v1/schedules', 'http.request.method': 'POST', 'http.response.status_code': 201 });
    // Ticks that found nothing due are not exported.
    expect(exporter.getFinishedSpans().filter((s) => s.name === 'kairos.tick' && s.attributes['kairos.tick.schedules'] === 0)).toEqual([]);
  });

  it('continues the caller’s trace through the API request into the delivery of an ad-hoc run', async () => {
    const callerTrace = '0af7651916cd43dd8448eb211c80319c';
    const callerSpan = 'b7ad6b7169203331';
    const response = await fetch(`${kairos.url}/v1/runs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', traceparent: `00-${callerTrace}-${callerSpan}-01`, tracestate: 'vendor=abc' },
      body: JSON.stringify({ target: { type: 'http', url: `${base}/adhoc` } }),
    });
    expect(response.status).toBe(201);
    const runId = ((await response.json()) as { id: string }).id;
    const delivery = await waitFor(async () => deliveries.find((d) => d.runId === runId), 'the ad-hoc delivery');
    await verdictOf(runId);

    expect(parseTraceparent(delivery.traceparent)?.traceId).toBe(callerTrace);
    expect(delivery.tracestate).toBe('vendor=abc');
    const spans = spansOf(callerTrace);
    const request = one(spans, 'POST /v1/runs');
    expect(parentOf(request)).toBe(callerSpan);
    expect(request.status.code).not.toBe(SpanStatusCode.ERROR);
    const dispatch = one(spans, 'kairos.dispatch');
    expect(parentOf(dispatch)).toBe(request.spanContext().spanId);
    const claim = one(spans, 'kairos.claim', runId);
    expect(parentOf(claim)).toBe(dispatch.spanContext().spanId);
    const execute = one(spans, 'kairos.execute', runId);
    expect(parentOf(execute)).toBe(claim.spanContext().spanId);
    expect(parseTraceparent(delivery.traceparent)?.spanId).toBe(execute.spanContext().spanId);
    expect(parentOf(one(spans, 'kairos.verdict', runId))).toBe(execute.spanContext().spanId);
  });

  it('continues the recorded trace of a run whose job the transport lost and the reconciler re-created', async () => {
    const queue = await runsQueue(t);
    try {
      const availableAt = new Date(Date.now() + 2_000).toISOString();
      const created = await client.post('/v1/runs', { target: { type: 'http', url: `${base}/lost` }, availableAt });
      expect(created.status).toBe(201);
      const runId = created.body.id as string;
      expect(await queue.remove(runId)).toBe(1);
      const delivery = await waitFor(async () => deliveries.find((d) => d.runId === runId), 'the delivery of the re-created job');
      await verdictOf(runId);

      const request = exporter.getFinishedSpans().filter((s) => s.name === 'POST /v1/runs' && s.attributes['http.response.status_code'] === 201).at(-1)!;
      const traceId = request.spanContext().traceId;
      expect(parseTraceparent(delivery.traceparent)?.traceId).toBe(traceId);
      // The re-created job carries no dispatch span: the claim hangs off the request the run recorded.
      const claim = one(spansOf(traceId), 'kairos.claim', runId);
      expect(parentOf(claim)).toBe(request.spanContext().spanId);
    } finally {
      await queue.close();
    }
  });

  it('hands an SDK handler the trace context, active while it runs', async () => {
    const created = await client.post('/v1/runs', { target: { type: 'handler', name: 'traced', queue: 'traced' } });
    expect(created.status).toBe(201);
    const seen = await waitFor(async () => handled.find((h) => h.context.runId === created.body.id), 'the handler to run');
    await verdictOf(created.body.id);

    const ids = parseTraceparent(seen.context.traceparent);
    expect(ids).not.toBeNull();
    const spans = spansOf(ids!.traceId);
    const execute = one(spans, 'kairos.execute', created.body.id);
    expect(execute.attributes).toMatchObject({ 'kairos.target.type': 'handler', 'kairos.target.handler': 'traced' });
    expect(ids!.spanId).toBe(execute.spanContext().spanId);
    expect(seen.activeSpanId).toBe(execute.spanContext().spanId);
    expect(seen.context.tracestate).toBeNull();
    const own = one(spans, 'user.work');
    expect(parentOf(own)).toBe(execute.spanContext().spanId);
    // The run was created by an API request: that is where its trace starts.
    expect(parentOf(one(spans, 'kairos.claim', created.body.id))).toBeDefined();
    expect(one(spans, 'POST /v1/runs').parentSpanContext).toBeUndefined();
  });
});
