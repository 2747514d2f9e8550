/**
 * Connection pools: session settings reach every connection a pool opens, and only that pool's; a
 * checked-out connection that ends fails its work without ending the process. And the uuid[] literal the hot path's batches pass instead of the driver's array encoding.
 */
import { createServer, connect, type AddressInfo, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '@kairos/domain';
import { createPool, inTransaction, uuidArray, withConnection, type Db } from '@kairos/ledger';
import { useTestEnvironment } from '../support/kairos.js';

describe('createPool', () => {
  let keyLookups: Db;

  const t = useTestEnvironment();

  beforeAll(async () => {
    keyLookups = createPool({ connectionString: t.databaseUrl, max: 2, settings: { enable_seqscan: 'off', statement_timeout: '5s' } });
  });

  afterAll(async () => {
    await keyLookups?.end();
  });

  it('applies its session settings to every connection it opens', async () => {
    const [a, b] = await Promise.all([keyLookups.connect(), keyLookups.connect()]);
    try {
      for (const client of [a, b]) {
        expect((await client.query('SHOW enable_seqscan')).rows[0].enable_seqscan).toBe('off');
        expect((await client.query('SHOW statement_timeout')).rows[0].statement_timeout).toBe('5s');
      }
      expect((await a.query('SELECT pg_backend_pid() AS pid')).rows[0].pid).not.toBe((await b.query('SELECT pg_backend_pid() AS pid')).rows[0].pid);
    } finally {
      a.release();
      b.release();
    }
    expect((await t.db.query('SHOW enable_seqscan')).rows[0].enable_seqscan).toBe('on');
  });

  it.each([
    ['a connection', (db: Db, work: (c: { query: Db['query'] }) => Promise<unknown>) => withConnection(db, work)],
    ['a transaction', (db: Db, work: (c: { query: Db['query'] }) => Promise<unknown>) => inTransaction(db, work)],
  ])('fails the work of %s whose connection drops mid-statement, and the process lives on', async (_, checkedOut) => {
    // A client whose connection ends without a word from the server (a pooler killed, a network
    // gone) emits 'error' even with a statement in flight: with no listener the process would end
    // with it, as a scheduler did when its PgBouncer restarted. A proxy in front of Postgres drops it.
    const sockets: Socket[] = [];
    const proxy = createServer((client) => {
      const server = connect(Number(new URL(t.databaseUrl).port || 5432), new URL(t.databaseUrl).hostname);
      for (const socket of [client, server]) {
        socket.on('error', () => undefined);
        sockets.push(socket);
      }
      client.pipe(server).pipe(client);
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    const url = new URL(t.databaseUrl);
    url.port = String((proxy.address() as AddressInfo).port);
    const uncaught: Error[] = [];
    const onUncaught = (error: Error): void => void uncaught.push(error);
    process.on('uncaughtException', onUncaught);
    const db = createPool({ connectionString: url.toString(), max: 1 });
    try {
      const work = checkedOut(db, async (client) => {
        setTimeout(() => sockets.forEach((socket) => socket.destroy()), 200);
        await client.query('SELECT pg_sleep(5)');
      });
      await expect(work).rejects.toThrow(/Connection terminated/);
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(uncaught).toEqual([]);
      // The dropped connection was discarded: the pool answers on a new one.
      expect((await db.query('SELECT 1 AS one')).rows[0].one).toBe(1);
    } finally {
      process.off('uncaughtException', onUncaught);
      await db.end();
      proxy.close();
    }
  });
});

describe('uuidArray', () => {
  const t = useTestEnvironment();

  it.each([0, 1, 3, 256])('reads back as the same %i ids, in order', async (n) => {
    const ids = Array.from({ length: n }, (_, i) => newId(Date.now() + i));
    const { rows } = await t.db.query<{ ids: string[] }>('SELECT $1::uuid[] AS ids', [uuidArray(ids)]);
    expect(rows[0]!.ids).toEqual(ids);
  });

  it.each(['', 'not-a-uuid', '0190a6c2-0000-7000-8000-000000000000,0190a6c2-0000-7000-8000-000000000001', '{0190a6c2-0000-7000-8000-000000000000}', '"x"'])(
    'refuses %j before it reaches Postgres',
    (bad) => {
      expect(() => uuidArray([newId(), bad])).toThrow(TypeError);
    },
  );
});
