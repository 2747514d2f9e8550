/**
 * Partition leases against Postgres: a take is conditional on the epoch observed and on the lease
 * being expired or its holder gone; renewals and the tick's proof of holding are fenced by epoch;
 * coverage carries over a clean hand-over and restarts (with an outage of the partition) after a
 * gap; members count only while their heartbeat is fresh and their presence lock is held. And the
 * tick's due-scan reads each partition from its own index range.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HolderPresence, PartitionLeaseRepository, inTransaction, type PartitionClaim } from '@kairos/ledger';
import { testEnvironment, type TestEnvironment } from '../support/kairos.js';

const TTL = 60_000;

describe('partition leases', () => {
  let t: TestEnvironment;
  const leases = new PartitionLeaseRepository();
  const take = (holder: string, claims: (PartitionClaim & { gone?: boolean })[]) =>
    inTransaction(t.db, (tx) => leases.take(tx, holder, claims.map((c) => ({ ...c, gone: c.gone ?? false })), TTL));
  const held = (holder: string, claims: PartitionClaim[]) => inTransaction(t.db, (tx) => leases.assertHeld(tx, holder, claims, TTL));
  const row = async (p: number) => (await t.db.query(`SELECT * FROM partition_leases WHERE partition = $1`, [p])).rows[0];

  beforeAll(async () => {
    t = await testEnvironment();
  });

  afterAll(async () => {
    await t?.cleanup();
  });

  it('takes free partitions once, at the epoch observed, and fences renewals and proofs by epoch', async () => {
    const first = await take('a', [
      { partition: 0, epoch: 0 },
      { partition: 1, epoch: 0 },
    ]);
    expect(first.map((g) => [g.partition, g.epoch, g.outage])).toEqual([
      [0, 1, null],
      [1, 1, null],
    ]);
    // Seen at the same epoch by another scheduler: already taken, nothing happens.
    expect(await take('b', [{ partition: 0, epoch: 0 }])).toEqual([]);
    // Alive and its holder not gone: not taken, whatever epoch is named.
    expect(await take('b', [{ partition: 0, epoch: 1 }])).toEqual([]);

    expect(await leases.renew(t.db, 'a', [{ partition: 0, epoch: 1 }, { partition: 1, epoch: 7 }], TTL)).toEqual([0]);
    expect(await leases.renew(t.db, 'b', [{ partition: 0, epoch: 1 }], TTL)).toEqual([]);
    expect((await held('a', [{ partition: 0, epoch: 1 }, { partition: 1, epoch: 2 }])).map((h) => h.partition)).toEqual([0]);

    // Its holder gone (presence lock free): taken before expiry, at the next epoch, which fences the old one.
    const taken = await take('b', [{ partition: 0, epoch: 1, gone: true }]);
    expect(taken.map((g) => [g.partition, g.epoch])).toEqual([[0, 2]]);
    expect(await held('a', [{ partition: 0, epoch: 1 }])).toEqual([]);
    expect(await leases.renew(t.db, 'a', [{ partition: 0, epoch: 1 }], TTL)).toEqual([]);
    expect((await held('b', [{ partition: 0, epoch: 2 }])).map((h) => h.partition)).toEqual([0]);
  });

  it('keeps coverage across a clean hand-over and records a gap as an outage of the partition', async () => {
    const [owned] = await take('a', [{ partition: 5, epoch: 0 }]);
    expect(await leases.release(t.db, 'a', [{ partition: 5, epoch: owned!.epoch }])).toEqual([5]);
    const [next] = await take('b', [{ partition: 5, epoch: owned!.epoch }]);
    expect(next!.coveredSince).toEqual(owned!.coveredSince);
    expect(next!.outage).toBeNull();

    // Released long ago: coverage restarts, the gap is a stopped owner's outage.
    await leases.release(t.db, 'b', [{ partition: 5, epoch: next!.epoch }]);
    await t.db.query(`UPDATE partition_leases SET released_at = now() - interval '5 seconds', expires_at = now() - interval '5 seconds' WHERE partition = 5`);
    const [later] = await take('c', [{ partition: 5, epoch: next!.epoch }]);
    expect(later!.outage).toMatchObject({ reasonCode: 'SCHEDULER_STOPPED' });
    expect(later!.coveredSince).toEqual(later!.outage!.endedAt);
    expect(later!.coveredSince.getTime()).toBeGreaterThan(next!.coveredSince.getTime());
    expect(later!.outage!.endedAt.getTime() - later!.outage!.startedAt.getTime()).toBeGreaterThanOrEqual(5_000);

    // Its owner died three seconds after its last renewal: a crashed owner's outage from that renewal.
    await t.db.query(`UPDATE partition_leases SET renewed_at = now() - interval '3 seconds' WHERE partition = 5`);
    const lastSeen = (await row(5)).renewed_at as Date;
    const [after] = await take('d', [{ partition: 5, epoch: later!.epoch, gone: true }]);
    expect(after!.outage).toMatchObject({ reasonCode: 'SCHEDULER_CRASHED', startedAt: lastSeen });
    const outages = (await t.db.query(`SELECT partition, detected_by_holder, reason_code FROM outages WHERE partition = 5 ORDER BY id`)).rows;
    expect(outages).toEqual([
      { partition: 5, detected_by_holder: 'c', reason_code: 'SCHEDULER_STOPPED' },
      { partition: 5, detected_by_holder: 'd', reason_code: 'SCHEDULER_CRASHED' },
    ]);
  });

  it('counts a member while its heartbeat is fresh and its presence lock is held, and forgets the gone', async () => {
    const presence = new HolderPresence(t.databaseUrl, 'alive', 'kairos-test-presence');
    expect(await presence.hold()).toBe(true);
    try {
      for (const holder of ['alive', 'dead', 'self']) await leases.heartbeat(t.db, { holder, hostname: 'h', pid: 1, clockOffsetMs: null });
      expect((await leases.liveMembers(t.db, 'self', TTL)).sort()).toEqual(['alive', 'self']);
      // The dead one is forgotten; a silent one with its lock still held (frozen) stays, but does not count.
      await t.db.query(`UPDATE scheduler_members SET heartbeat_at = now() - interval '2 minutes' WHERE holder = 'alive'`);
      expect(await leases.liveMembers(t.db, 'self', TTL)).toEqual(['self']);
      expect((await t.db.query(`SELECT holder FROM scheduler_members ORDER BY holder`)).rows.map((r) => r.holder)).toEqual(['alive', 'self']);
      // observe() tells a live lease of a gone holder from one whose holder is alive.
      await t.db.query(`UPDATE partition_leases SET holder = 'alive', expires_at = now() + interval '1 minute' WHERE partition = 10`);
      await t.db.query(`UPDATE partition_leases SET holder = 'dead', expires_at = now() + interval '1 minute' WHERE partition = 11`);
      const seen = await leases.observe(t.db, 'self');
      expect(seen).toHaveLength(16);
      expect([seen[10]!.holderGone, seen[11]!.holderGone]).toEqual([false, true]);
    } finally {
      await presence.release();
    }
  });

  it('scans each partition of the due schedules through its own index range', async () => {
    // On an almost empty table a sequential scan is cheapest; rule it out to see the path Postgres has.
    const client = await t.db.connect();
    await client.query('SET enable_seqscan = off');
    const { rows } = await client.query(
      `EXPLAIN SELECT s.id FROM unnest('{1,2}'::smallint[]) AS p(partition)
       CROSS JOIN LATERAL (SELECT s.id FROM schedules s WHERE s.tick_partition = p.partition AND s.status = 'active' AND s.next_fire_at <= now()
                           ORDER BY s.next_fire_at LIMIT 10 FOR NO KEY UPDATE OF s SKIP LOCKED) s`,
    );
    client.release(true);
    expect(rows.map((r) => r['QUERY PLAN']).join('\n')).toMatch(/Index Scan using schedules_partition_due/);
  });
});
