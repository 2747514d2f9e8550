/**
 * How big the ledger is, for `kairos status` and /metrics: per table an estimate of its rows (from
 * Postgres' statistics, so reading it costs nothing however large the table) and its bytes on disk
 * with indexes and TOAST.
 */
import type { Queryable } from '../database.js';

export interface TableSize {
  table: string;
  /** An estimate: live rows as Postgres' statistics last counted them. */
  rows: number;
  bytes: number;
}

export interface LedgerSize {
  tables: TableSize[];
  /** The whole database, including what the tables do not account for (catalogue, free space). */
  databaseBytes: number;
}

export async function ledgerSize(db: Queryable): Promise<LedgerSize> {
  const { rows } = await db.query<TableSize>(
    `SELECT c.relname AS table,
            coalesce(s.n_live_tup, greatest(c.reltuples, 0))::bigint AS rows,
            pg_total_relation_size(c.oid) AS bytes
     FROM pg_class c
     JOIN pg_namespace n ON n.oid = c.relnamespace
     LEFT JOIN pg_stat_user_tables s ON s.relid = c.oid
     WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p')
     ORDER BY c.relname`,
  );
  const database = await db.query<{ bytes: number }>(`SELECT pg_database_size(current_database()) AS bytes`);
  return { tables: rows, databaseBytes: database.rows[0]!.bytes };
}
