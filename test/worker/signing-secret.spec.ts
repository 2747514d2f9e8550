/**
 * Signing secrets: a receiver reads its namespace's secret, verifies Kairos-Signature on a real
 * delivery, and across a rotation keeps verifying: during the grace window every delivery carries a
 * v1 signature for the new and for the previous secret, afterwards only the new one. CLI and
 * GraphQL show and rotate the same secret; no secret reaches the logs.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi, type MockInstance } from 'vitest';
import { runCli } from '../../apps/cli/src/cli.js';
import { sleepUntil, useKairos, waitFor } from '../support/kairos.js';

interface Delivery {
  headers: IncomingHttpHeaders;
  body: string;
}

/** What a receiver does: which of `secrets` signed this delivery (by index), checking every v1. */
function verifiedBy(delivery: Delivery, secrets: string[]): number[] {
  const parts = String(delivery.headers['kairos-signature']).split(',');
  const t = parts.find((p) => p.startsWith('t='))!.slice(2);
  const signatures = parts.filter((p) => p.startsWith('v1=')).map((p) => Buffer.from(p.slice(3), 'hex'));
  return secrets
    .map((secret, i) => [i, Buffer.from(createHmac('sha256', secret).update(`${t}.${delivery.body}`).digest('hex'), 'hex')] as const)
    .filter(([, expected]) => signatures.some((s) => s.length === expected.length && timingSafeEqual(s, expected)))
    .map(([i]) => i);
}

const v1Count = (d: Delivery) => String(d.headers['kairos-signature']).split(',').filter((p) => p.startsWith('v1=')).length;

describe('signing secrets', () => {
  let server: Server;
  let hook: string;
  const deliveries = new Map<string, Delivery>();
  const logged: string[] = [];
  const spies: MockInstance[] = [];

  beforeAll(async () => {
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        deliveries.set((JSON.parse(body) as { runId: string }).runId, { headers: req.headers, body });
        res.end('{}');
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    hook = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
    for (const stream of [process.stdout, process.stderr]) {
      const write = stream.write.bind(stream);
      spies.push(
        vi.spyOn(stream, 'write').mockImplementation(((chunk: string | Uint8Array, ...rest: never[]) => {
          logged.push(String(chunk));
          return write(chunk, ...rest);
        }) as typeof stream.write),
      );
    }
  });

  afterAll(async () => {
    for (const spy of spies) spy.mockRestore();
    await new Promise((r) => server.close(r));
  });

  const { t, client } = useKairos({ env: { KAIROS_HTTP_ALLOWLIST: '127.0.0.1', KAIROS_SIGNING_SECRET_GRACE: '12s', LOG_LEVEL: 'debug' } });

  const deliver = async (): Promise<Delivery> => {
    const run = await client.post('/v1/runs', { target: { type: 'http', url: hook }, payload: { n: Math.random() } });
    expect(run.status).toBe(201);
    return waitFor(async () => deliveries.get(run.body.id), `run ${run.body.id} to be delivered`);
  };

  it('signs with the current secret, then with both during the grace, then with the new one alone', async () => {
    const first = (await client.get('/v1/signing-secret')).body.secret as string;
    expect(first).toMatch(/^[0-9a-f]{64}$/);
    const before = await deliver();
    expect(v1Count(before)).toBe(1);
    expect(verifiedBy(before, [first])).toEqual([0]);

    const rotated = await client.post('/v1/signing-secret/rotate');
    expect(rotated.status).toBe(200);
    const second = rotated.body.secret as string;
    expect(second).not.toBe(first);
    const graceEnds = Date.parse(rotated.body.previousValidUntil);
    expect(graceEnds - Date.now()).toBeGreaterThan(9_000);
    expect(graceEnds - Date.now()).toBeLessThanOrEqual(12_000);
    expect((await client.get('/v1/signing-secret')).body.secret).toBe(second);

    // Workers cache secrets for five seconds; until they re-read them a delivery still verifies with the old one.
    expect(verifiedBy(await deliver(), [second, first])).toContain(1);
    const during = await waitFor(async () => {
      const delivery = await deliver();
      return v1Count(delivery) === 2 ? delivery : undefined;
    }, 'a delivery signed with both secrets', 6_000, 250);
    expect(verifiedBy(during, [second, first])).toEqual([0, 1]);

    await sleepUntil(graceEnds + 500);
    const after = await deliver();
    expect(v1Count(after)).toBe(1);
    expect(verifiedBy(after, [second, first])).toEqual([0]);
  });

  it('shows and rotates the same secret from the CLI and GraphQL', async () => {
    const lines: string[] = [];
    const out = { line: (l: string) => lines.push(l) };
    const env = { DATABASE_URL: t.databaseUrl, KAIROS_SIGNING_SECRET_GRACE: '1h' };
    expect(await runCli(['signing-secret', 'show'], out, env)).toBe(0);
    expect(lines[0]).toBe((await client.get('/v1/signing-secret')).body.secret);
    expect(await runCli(['signing-secret', 'rotate', '--json'], out, env)).toBe(0);
    const rotated = JSON.parse(lines.slice(1).join('\n')) as { secret: string; previousValidUntil: string };
    expect(Date.parse(rotated.previousValidUntil) - Date.now()).toBeGreaterThan(3_500_000);
    const shown = await client.post('/graphql', { query: '{ signingSecret { secret } }' });
    expect(shown.body.data.signingSecret.secret).toBe(rotated.secret);
    const again = await client.post('/graphql', { query: 'mutation { rotateSigningSecret { secret previousValidUntil } }' });
    expect(again.body.data.rotateSigningSecret.secret).toMatch(/^[0-9a-f]{64}$/);
    expect((await client.get('/v1/signing-secret')).body.secret).toBe(again.body.data.rotateSigningSecret.secret);
    expect(await runCli(['signing-secret', 'show', '--namespace', 'nobody'], out, env)).toBe(1);
  });

  it('never writes a secret to the logs', async () => {
    const secrets = (await t.db.query(`SELECT signing_secret, previous_signing_secret FROM namespaces`)).rows.flatMap((r) => [r.signing_secret, r.previous_signing_secret]).filter(Boolean);
    const output = logged.join('');
    expect(output.length).toBeGreaterThan(0);
    for (const secret of secrets) expect(output).not.toContain(secret);
  });
});
