/**
 * Worker credentials: a Postgres login per grant that may call the worker protocol's functions
 * (schema kairos_worker) and nothing else, for one namespace and some queues, which every function
 * checks. A worker connected with it cannot read or write a table of the ledger. Making one needs a
 * server role with CREATEROLE.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { AccessError, NotFoundError } from '@kairos/domain';
import { inTransaction, pgErrorCode, type Db, type Queryable } from '../database.js';

export interface WorkerCredential {
  role: string;
  namespace: string;
  queues: string[];
  createdAt: Date;
  createdBy: string;
}

export interface IssuedWorkerCredential extends WorkerCredential {
  /** The login's password: shown once, when it is made. */
  password: string;
}

/** Longest Postgres identifier. */
const MAX_ROLE_NAME = 63;

/** `kairos_worker_<namespace>_<random>`: a valid unquoted identifier, unique across the Postgres cluster. */
function roleNameFor(namespace: string): string {
  const suffix = randomBytes(5).toString('hex');
  const stem = `kairos_worker_${namespace.replace(/[^a-z0-9_]/g, '_')}`.slice(0, MAX_ROLE_NAME - suffix.length - 1);
  return `${stem}_${suffix}`;
}

const COLUMNS = `c.role_name AS role, n.name AS namespace, c.queues, c.created_at AS "createdAt", c.created_by AS "createdBy"`;

export class WorkerCredentialRepository {
  /**
   * Makes a login for namespace `namespaceId` and `queues`. When the queues live in Postgres
   * (`transportSchema`), the login may also use that schema's tables, as a worker's transport must.
   */
  async grant(
    db: Db,
    grant: { namespaceId: string; namespace: string; queues: readonly string[]; createdBy: string; transportSchema: string | null },
  ): Promise<IssuedWorkerCredential> {
    const role = roleNameFor(grant.namespace);
    const password = randomBytes(24).toString('base64url');
    const queues = [...new Set(grant.queues)].sort();
    const id = pg.escapeIdentifier(role);
    try {
      return await inTransaction(db, async (tx) => {
        await tx.query(`CREATE ROLE ${id} LOGIN PASSWORD ${pg.escapeLiteral(password)} NOSUPERUSER NOCREATEDB NOCREATEROLE NOINHERIT`);
        await tx.query(`GRANT USAGE ON SCHEMA kairos_worker TO ${id}`);
        await tx.query(`GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA kairos_worker TO ${id}`);
        if (grant.transportSchema !== null) await this.grantTransport(tx, id, grant.transportSchema);
        const { rows } = await tx.query<{ createdAt: Date }>(
          `INSERT INTO kairos_worker.credentials (role_name, namespace_id, queues, created_by) VALUES ($1, $2, $3, $4) RETURNING created_at AS "createdAt"`,
          [role, grant.namespaceId, queues, grant.createdBy],
        );
        return { role, password, namespace: grant.namespace, queues, createdAt: rows[0]!.createdAt, createdBy: grant.createdBy };
      });
    } catch (error) {
      if (pgErrorCode(error) === '42501') {
        throw new AccessError(
          'FORBIDDEN',
          `the server's database role may not create logins (${(error as Error).message}): give it CREATEROLE (ALTER ROLE <role> CREATEROLE) or grant as a role that has it`,
        );
      }
      throw error;
    }
  }

  /** A Postgres transport's tables and sequences, which BullMQ's workers read and write themselves. */
  private async grantTransport(tx: Queryable, id: string, schema: string): Promise<void> {
    const { rows } = await tx.query<{ present: boolean }>(`SELECT to_regnamespace($1) IS NOT NULL AS present`, [schema]);
    if (!rows[0]!.present) return;
    const s = pg.escapeIdentifier(schema);
    await tx.query(`GRANT USAGE ON SCHEMA ${s} TO ${id}`);
    await tx.query(`GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA ${s} TO ${id}`);
    await tx.query(`GRANT USAGE, SELECT, UPDATE ON ALL SEQUENCES IN SCHEMA ${s} TO ${id}`);
    await tx.query(`GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA ${s} TO ${id}`);
  }

  async list(db: Queryable, namespaceId?: string): Promise<WorkerCredential[]> {
    const { rows } = await db.query<WorkerCredential>(
      `SELECT ${COLUMNS} FROM kairos_worker.credentials c JOIN namespaces n ON n.id = c.namespace_id
       WHERE $1::uuid IS NULL OR c.namespace_id = $1 ORDER BY c.created_at, c.role_name`,
      [namespaceId ?? null],
    );
    return rows;
  }

  /** Drops the login and its rights; its open sessions end. Refuses a role that is not a worker credential. */
  async revoke(db: Db, role: string, namespaceId?: string): Promise<void> {
    await inTransaction(db, async (tx) => {
      const { rowCount } = await tx.query(`DELETE FROM kairos_worker.credentials WHERE role_name = $1 AND ($2::uuid IS NULL OR namespace_id = $2)`, [
        role,
        namespaceId ?? null,
      ]);
      if (rowCount === 0) throw new NotFoundError('worker credential', role);
      const id = pg.escapeIdentifier(role);
      await tx.query(`DROP OWNED BY ${id}`);
      await tx.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = $1`, [role]);
      await tx.query(`DROP ROLE ${id}`);
    });
  }
}

/** The connection URL of a credential: the server's own database URL with the login's name and password. */
export function credentialUrl(databaseUrl: string, credential: { role: string; password: string }): string {
  const url = new URL(databaseUrl);
  url.username = encodeURIComponent(credential.role);
  url.password = encodeURIComponent(credential.password);
  return url.toString();
}
