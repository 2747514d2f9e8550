/**
 * Where spans go: over OTLP/HTTP to OTEL_EXPORTER_OTLP_ENDPOINT, named after the process, and
 * flushed when it stops; without an endpoint, no tracer provider at all, so nothing is recorded,
 * exported or stored with a run.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { trace } from '@opentelemetry/api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '@kairos/config';
import { startTracing } from '@kairos/telemetry';
import { SPAWNING_TIMEOUT_MS, api, spawnKairos, startInProcess, testEnvironment, waitFor, type TestEnvironment } from '../support/kairos.js';

interface Export {
  path: string;
  contentType: string | undefined;
  body: { resourceSpans: { resource: { attributes: { key: string; value: { stringValue?: string } }[] }; scopeSpans: { spans: { name: string; kind: number }[] }[] }[] };
}

describe('trace export', () => {
  let t: TestEnvironment;
  let collector: http.Server;
  let collectorUrl: string;
  const exports: Export[] = [];

  beforeAll(async () => {
    collector = http.createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        exports.push({ path: req.url ?? '', contentType: req.headers['content-type'], body: JSON.parse(body) });
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
    collectorUrl = `http://127.0.0.1:${(collector.address() as AddressInfo).port}`;
    t = await testEnvironment();
  });

  afterAll(async () => {
    await t?.cleanup();
    collector?.closeAllConnections();
    await new Promise((r) => collector?.close(r));
  });

  it('registers no tracer provider without an endpoint: spans are no-ops and runs record no trace', async () => {
    expect(startTracing(loadConfig({}), 'api')).toBe(false);
    const kairos = await startInProcess(t.env());
    try {
      const span = trace.getTracer('probe').startSpan('probe');
      expect(span.isRecording()).toBe(false);
      span.end();
      const created = await api(kairos.url).post('/v1/runs', { target: { type: 'handler', name: 'echo' } });
      expect(created.status).toBe(201);
      const { rows } = await t.db.query('SELECT trace_parent, trace_state FROM runs WHERE id = $1', [created.body.id]);
      expect(rows[0]).toEqual({ trace_parent: null, trace_state: null });
    } finally {
      await kairos.app.close();
    }
    expect(exports).toEqual([]);
  });

  it(
    'exports the spans of a process over OTLP/HTTP when OTEL_EXPORTER_OTLP_ENDPOINT is set, flushing them at shutdown',
    async () => {
      const child = spawnKairos('api', t.env({ OTEL_EXPORTER_OTLP_ENDPOINT: collectorUrl }));
      try {
        const base = await child.ready;
        expect((await api(base).get('/v1/schedules')).status).toBe(200);
      } finally {
        child.process.kill('SIGTERM');
      }
      expect(await child.exited).toBe(0);
      const spans = await waitFor(async () => {
        const all = exports.flatMap((e) => e.body.resourceSpans.flatMap((r) => r.scopeSpans.flatMap((s) => s.spans.map((span) => ({ span, resource: r.resource })))));
        return all.length > 0 ? all : undefined;
      }, 'an export');
      expect(exports.every((e) => e.path === '/v1/traces' && e.contentType === 'application/json')).toBe(true);
      const request = spans.find((s) => s.span.name === 'GET /v1/schedules');
      expect(request, JSON.stringify(spans.map((s) => s.span.name))).toBeDefined();
      const serviceName = request!.resource.attributes.find((a) => a.key === 'service.name')?.value.stringValue;
      expect(serviceName).toBe('kairos-api');
    },
    SPAWNING_TIMEOUT_MS,
  );
});
