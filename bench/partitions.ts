/**
 * `npm run bench:partitions`: slots written per second by one scheduler process and by two sharing
 * the partitions, in one run. Each round gets a fresh database and Redis prefix, starts the
 * schedulers (no workers: the runs are written and handed to BullMQ, which is what the tick does),
 * waits until the partitions are balanced over them, then makes KAIROS_BENCH_SLOTS one-shot
 * schedules due at the same instant and times how long it takes from that instant until every slot
 * has its tick. The schedulers run without lookahead, which would write slots before their instant
 * and so hide part of the work from the clock.
 * Rounds alternate (one, two, one, two, ...) and medians are reported, with the load average: on a
 * shared machine only the ratio from the same run means something.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { TICK_PARTITIONS, newId, specHash } from '@kairos/domain';
import { readScheduleCreate } from '@kairos/domain/wire';
import { ScheduleRepository, inTransaction, openLedger } from '@kairos/ledger';
import { deleteKeysWithPrefix } from '@kairos/queue';

const ADMIN_URL = process.env.KAIROS_BENCH_ADMIN_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const SLOTS = Number(process.env.KAIROS_BENCH_SLOTS ?? 20_000);
const ROUNDS = Number(process.env.KAIROS_BENCH_ROUNDS ?? 2);
const ROOT = fileURLToPath(new URL('../', import.meta.url));

async function admin(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: ADMIN_URL });
  await client.connect();
  await client.query(sql);
  await client.end();
}

async function until<T>(probe: () => Promise<T | undefined>, timeoutMs: number, what: string): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`bench: timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

function scheduler(url: string, prefix: string): { child: ChildProcess; exited: Promise<unknown> } {
  const child = spawn(process.execPath, ['--import', '@swc-node/register/esm-register', 'apps/scheduler/src/main.ts'], {
    cwd: ROOT,
    // No lookahead: the rate is timed from the slots' instant, so none may be written before it.
    env: { ...process.env, DATABASE_URL: url, REDIS_URL, KAIROS_QUEUE_PREFIX: prefix, KAIROS_LOOKAHEAD: '0s', PORT: '0', LOG_LEVEL: 'warn', LOG_FORMAT: 'json' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  return { child, exited: new Promise((resolve) => child.once('exit', resolve)) };
}

/** One round: `schedulers` processes, SLOTS slots due at one instant. Answers slots per second. */
async function round(schedulers: number): Promise<number> {
  const name = `kairos_bench_partitions_${Date.now().toString(36)}`;
  await admin(`CREATE DATABASE ${name}`);
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  const prefix = `kb-${name}`;
  const { db } = await openLedger({ databaseUrl: url.toString(), poolSize: 4, applicationName: 'kairos-bench' });
  const children = Array.from({ length: schedulers }, () => scheduler(url.toString(), prefix));
  try {
    // Balanced: every partition owned live, by `schedulers` distinct holders with fair shares.
    await until(
      async () => {
        const { rows } = await db.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM partition_leases WHERE expires_at > now() GROUP BY holder`,
        );
        const shares = rows.map((r) => r.n);
        const fair = Math.floor(TICK_PARTITIONS / schedulers);
        return shares.length === schedulers && shares.reduce((a, b) => a + b, 0) === TICK_PARTITIONS && shares.every((n) => n >= fair) ? true : undefined;
      },
      180_000,
      `${schedulers} schedulers to share the partitions`,
    );
    // One schedule made by the same reader as POST /v1/schedules, then cloned in bulk with new ids
    // (which spread them over the partitions), all parked an hour ahead.
    const later = new Date(Date.now() + 3_600_000);
    const { rows: ns } = await db.query<{ id: string }>(`SELECT id FROM namespaces WHERE name = 'default'`);
    const { spec } = readScheduleCreate({ name: 'slot-0', at: later.toISOString(), target: { type: 'handler', name: 'noop' }, overlap: 'allow' }, Date.now());
    await inTransaction(db, (tx) =>
      new ScheduleRepository().create(tx, { id: newId(), namespaceId: ns[0]!.id, name: 'slot-0', spec, specHash: specHash(spec), paused: false, idempotencyKey: null, requestHash: null, nextFireAt: later }),
    );
    const { rows: columns } = await db.query<{ c: string }>(
      `SELECT quote_ident(column_name) AS c FROM information_schema.columns
       WHERE table_name = 'schedules' AND is_generated = 'NEVER' AND column_name NOT IN ('id', 'name') ORDER BY ordinal_position`,
    );
    const list = columns.map((r) => r.c).join(', ');
    await db.query(`INSERT INTO schedules (id, name, ${list}) SELECT gen_random_uuid(), 'slot-' || g, ${list} FROM schedules, generate_series(1, $1) g`, [SLOTS - 1]);
    const at = (await db.query<{ at: Date }>(`SELECT now() + interval '2 seconds' AS at`)).rows[0]!.at;
    await db.query(`UPDATE schedules SET at = $1, next_fire_at = $1`, [at]);
    const { rows } = await until(
      async () => {
        const result = await db.query<{ n: number; last: Date }>(`SELECT count(*)::int AS n, max(created_at) AS last FROM ticks`);
        return result.rows[0]!.n >= SLOTS ? result : undefined;
      },
      600_000,
      'every slot to have its tick',
    );
    const seconds = (rows[0]!.last.getTime() - at.getTime()) / 1000;
    return SLOTS / seconds;
  } finally {
    for (const { child } of children) child.kill('SIGTERM');
    await Promise.all(children.map((c) => c.exited));
    await db.end();
    await admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await deleteKeysWithPrefix(REDIS_URL, prefix);
  }
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

const one: number[] = [];
const two: number[] = [];
const loadBefore = loadavg();
for (let r = 0; r < ROUNDS; r++) {
  one.push(await round(1));
  console.log(`round ${r + 1}: one scheduler  ${Math.round(one.at(-1)!)} slots/s (load ${loadavg()[0]!.toFixed(2)})`);
  two.push(await round(2));
  console.log(`round ${r + 1}: two schedulers ${Math.round(two.at(-1)!)} slots/s (load ${loadavg()[0]!.toFixed(2)})`);
}
const loadAfter = loadavg();
console.log(`\n${SLOTS} slots due at one instant, ${ROUNDS} rounds each, medians:`);
console.log(`  one scheduler   ${Math.round(median(one))} slots/s`);
console.log(`  two schedulers  ${Math.round(median(two))} slots/s`);
console.log(`  ratio           ${(median(two) / median(one)).toFixed(2)}x`);
console.log(`  load average    ${loadBefore.map((l) => l.toFixed(2)).join(' ')} before, ${loadAfter.map((l) => l.toFixed(2)).join(' ')} after`);
