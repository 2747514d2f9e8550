/**
 * One source for each fact: the migrated tables must be exactly what prisma/schema.prisma
 * describes, and every status CHECK must list exactly the values of its enum in libs/domain.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PrismaPg } from '@prisma/adapter-pg';
import { PrismaClient } from '../../prisma/generated/client.js';
import {
  CATCHUP_MODES,
  DELIVERY_STATES,
  DOMAIN_EVENT_TOPICS,
  DST_GAP_POLICIES,
  DST_OVERLAP_POLICIES,
  OVERLAP_POLICIES,
  RUN_ORIGINS,
  RUN_STATES,
  SCHEDULE_KINDS,
  SCHEDULE_STATUSES,
  SUBSCRIPTION_FORMATS,
  SUBSCRIPTION_STATES,
  TICK_ORIGINS,
  TICK_OUTCOMES,
  WORKER_UPGRADES,
} from '@kairos/domain';
import { useTestEnvironment } from '../support/kairos.js';

interface RuntimeField {
  name: string;
  kind: string;
  dbName?: string | null;
}
interface RuntimeModel {
  dbName: string | null;
  fields: RuntimeField[];
}

describe('the ledger schema', () => {
  let prisma: PrismaClient;

  const t = useTestEnvironment();

  beforeAll(async () => {
    prisma = new PrismaClient({ adapter: new PrismaPg({ connectionString: t.databaseUrl }) });
  });

  afterAll(async () => {
    await prisma?.$disconnect();
  });

  it('matches prisma/schema.prisma table for table, column for column', async () => {
    const models = (prisma as unknown as { _runtimeDataModel: { models: Record<string, RuntimeModel> } })._runtimeDataModel.models;
    const described = new Map<string, Set<string>>();
    for (const [name, model] of Object.entries(models)) {
      const columns = model.fields.filter((f) => f.kind === 'scalar' || f.kind === 'enum').map((f) => f.dbName ?? f.name);
      described.set(model.dbName ?? name, new Set(columns));
    }
    const { rows } = await t.db.query<{ table: string; column: string }>(
      `SELECT table_name AS table, column_name AS column FROM information_schema.columns
       WHERE table_schema = 'public' AND table_name <> 'kairos_migrations'`,
    );
    const actual = new Map<string, Set<string>>();
    for (const { table, column } of rows) actual.set(table, (actual.get(table) ?? new Set()).add(column));
    expect([...actual.keys()].sort()).toEqual([...described.keys()].sort());
    for (const [table, columns] of actual) expect([...columns].sort(), table).toEqual([...described.get(table)!].sort());
  });

  it('can be read through the Prisma client, model by model', async () => {
    for (const model of ['namespace', 'apiKey', 'schedule', 'run', 'tick', 'runEvent', 'lease', 'schedulerSession', 'outage', 'outbox', 'subscription', 'subscriptionDelivery', 'subscriptionAttempt'] as const) {
      // Prisma selects every column it knows by name: a missing or renamed column fails here.
      await (prisma[model] as unknown as { findFirst(): Promise<unknown> }).findFirst();
    }
    expect((await prisma.namespace.findFirst({ where: { name: 'default' } }))?.signingSecret).toMatch(/^[0-9a-f]{64}$/);
  });

  it.each([
    ['runs', 'state', RUN_STATES],
    ['runs', 'origin', RUN_ORIGINS],
    ['ticks', 'outcome', TICK_OUTCOMES],
    ['ticks', 'origin', TICK_ORIGINS],
    ['schedules', 'kind', SCHEDULE_KINDS],
    ['schedules', 'status', SCHEDULE_STATUSES],
    ['schedules', 'overlap', OVERLAP_POLICIES],
    ['schedules', 'catchup_mode', CATCHUP_MODES],
    ['schedules', 'dst_gap', DST_GAP_POLICIES],
    ['schedules', 'dst_overlap', DST_OVERLAP_POLICIES],
    ['outbox', 'topic', DOMAIN_EVENT_TOPICS],
    ['subscriptions', 'state', SUBSCRIPTION_STATES],
    ['subscriptions', 'format', SUBSCRIPTION_FORMATS],
    ['subscription_deliveries', 'state', DELIVERY_STATES],
    ['workers', 'upgrade', WORKER_UPGRADES],
  ] as const)('%s.%s CHECK lists exactly its enum', async (table, column, values) => {
    const { rows } = await t.db.query<{ def: string }>(
      `SELECT pg_get_constraintdef(oid) AS def FROM pg_constraint WHERE conrelid = $1::regclass AND contype = 'c'`,
      [table],
    );
    const check = rows.map((r) => r.def).find((d) => new RegExp(`^CHECK \\(\\(${column} = ANY \\(ARRAY\\[`).test(d));
    expect(check, `a CHECK listing the values of ${table}.${column}`).toBeDefined();
    const listed = [...check!.matchAll(/'([^']+)'::text/g)].map((m) => m[1]);
    expect(listed.sort()).toEqual([...values].sort());
  });
});
