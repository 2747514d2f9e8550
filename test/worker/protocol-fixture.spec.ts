/**
 * Version skew: a worker built against an earlier release keeps running against this server for as
 * long as the server serves its protocol version. The fixture (test/fixtures/worker-protocol-v1) is
 * a worker written against protocol version 1 and frozen there; it runs its handler's runs here,
 * connected with nothing but a worker credential. A worker that speaks a version the server does
 * not serve refuses to start, saying which versions meet.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { ProtocolMismatchError, WORKER_PROTOCOL_VERSION } from '@kairos/sdk';
import { runInState, useKairos } from '../support/kairos.js';
import { spawnProcess, type ChildOutput } from '../support/processes.js';
import { WorkerProtocol } from '../../packages/sdk/src/worker/worker-protocol.js';

describe('the worker protocol across versions', () => {
  const { t, client } = useKairos();
  let fixture: ChildOutput | null = null;
  let role: string | null = null;

  afterAll(async () => {
    fixture?.process.kill('SIGTERM');
    await fixture?.exited;
    if (role) await client.delete(`/v1/worker-credentials/${role}`);
  });

  it('runs the runs of a protocol-1 worker kept from an earlier release', async () => {
    const granted = await client.post('/v1/worker-credentials', { queues: ['legacy'] });
    role = granted.body.role;
    fixture = spawnProcess(process.execPath, ['test/fixtures/worker-protocol-v1/worker.mjs'], {
      env: {
        ...process.env,
        DATABASE_URL: granted.body.databaseUrl,
        ...(granted.body.redis ? { REDIS_URL: granted.body.redis.url } : {}),
        KAIROS_QUEUE_PREFIX: t.redisPrefix,
        QUEUE: 'legacy',
      },
    });
    await fixture.until(/serves queue legacy on protocol 1/, 'the protocol-1 worker to start');

    const ok = await client.post('/v1/runs', { target: { type: 'handler', name: 'fixture-echo', queue: 'legacy' }, payload: { n: 1 } });
    const failing = await client.post('/v1/runs', { target: { type: 'handler', name: 'fixture-echo', queue: 'legacy' }, payload: { fail: 'no such file' } });
    expect((await runInState(client, ok.body.id, 'succeeded')).result).toEqual({ echo: { n: 1 } });
    expect(await runInState(client, failing.body.id, 'dead')).toMatchObject({ reasonCode: 'HANDLER_NON_RETRYABLE', reasonText: 'no such file' });
    const deadLetters = await client.get('/v1/dead-letters');
    expect(deadLetters.body.items.map((r: { id: string }) => r.id)).toContain(failing.body.id);
    const workers = await client.get('/v1/workers');
    expect(workers.body.items).toContainEqual(expect.objectContaining({ queue: 'legacy', handlers: ['fixture-echo'], version: 'fixture-v1' }));
  });

  it('refuses, in one line, a worker whose protocol version the server does not serve', async () => {
    const protocol = new WorkerProtocol();
    await expect(protocol.checkVersion(t.db)).resolves.toBeUndefined();
    const cases = [
      // A server that moved on and no longer serves this worker's version.
      { served: [WORKER_PROTOCOL_VERSION + 1, WORKER_PROTOCOL_VERSION + 2], says: `serves ${WORKER_PROTOCOL_VERSION + 1} to ${WORKER_PROTOCOL_VERSION + 2}: upgrade @kairos/sdk in this worker` },
      { served: [WORKER_PROTOCOL_VERSION + 1, WORKER_PROTOCOL_VERSION + 1], says: `serves ${WORKER_PROTOCOL_VERSION + 1}: upgrade @kairos/sdk in this worker` },
      // A server from before multi-step runs, serving version 1 only.
      { served: [1, 1], says: 'serves 1: upgrade the Kairos server' },
    ];
    for (const { served, says } of cases) {
      const tx = await t.db.connect();
      try {
        await tx.query('BEGIN');
        await tx.query(`CREATE OR REPLACE FUNCTION kairos_worker.protocol_versions(OUT oldest integer, OUT newest integer) LANGUAGE sql AS $$ SELECT ${served[0]}, ${served[1]} $$`);
        const refusal = await protocol.checkVersion(tx).catch((error: unknown) => error);
        expect(refusal).toBeInstanceOf(ProtocolMismatchError);
        expect((refusal as Error).message).toBe(`this worker speaks Kairos worker protocol ${WORKER_PROTOCOL_VERSION}; the server ${says}`);
      } finally {
        await tx.query('ROLLBACK');
        tx.release();
      }
    }
    // A server older than the worker: its ledger has no worker protocol yet.
    const tx = await t.db.connect();
    try {
      await tx.query('BEGIN');
      await tx.query('DROP SCHEMA kairos_worker CASCADE');
      await expect(protocol.checkVersion(tx)).rejects.toThrow('the server serves none (its ledger predates the worker protocol): upgrade the Kairos server');
    } finally {
      await tx.query('ROLLBACK');
      tx.release();
    }
  });
});
