/** API keys and the namespaces they open. */
import { newId, type ApiScope } from '@kairos/domain';
import type { Queryable } from '../database.js';
import { newSigningSecret } from '../namespaces/namespace.repository.js';

export interface ApiKeyRow {
  id: string;
  namespaceId: string;
  namespace: string;
  name: string;
  prefix: string;
  secretHash: string;
  scopes: ApiScope[];
  createdAt: Date;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
}

const COLUMNS = `k.id, k.namespace_id AS "namespaceId", n.name AS namespace, k.name, k.prefix, k.secret_hash AS "secretHash",
  k.scopes, k.created_at AS "createdAt", k.last_used_at AS "lastUsedAt", k.revoked_at AS "revokedAt"`;

export class ApiKeyRepository {
  /** The namespace's id, creating it (with its own signing secret) when it does not exist. */
  async ensureNamespace(db: Queryable, name: string): Promise<string> {
    const { rows } = await db.query<{ id: string }>(
      `INSERT INTO namespaces (id, name, signing_secret) VALUES ($1, $2, $3)
       ON CONFLICT (name) DO UPDATE SET name = EXCLUDED.name
       RETURNING id`,
      [newId(), name, newSigningSecret()],
    );
    return rows[0]!.id;
  }

  async create(db: Queryable, key: { namespaceId: string; name: string; prefix: string; secretHash: string; scopes: ApiScope[] }): Promise<void> {
    await db.query(
      `INSERT INTO api_keys (id, namespace_id, name, prefix, secret_hash, scopes) VALUES ($1, $2, $3, $4, $5, $6)`,
      [newId(), key.namespaceId, key.name, key.prefix, key.secretHash, key.scopes],
    );
  }

  /**
   * Stores `key` as an admin key of the namespace unless a live admin key exists in any namespace;
   * true when it did. A transaction-scoped advisory lock makes API replicas starting at once issue one.
   */
  async createFirstAdminKey(tx: Queryable, key: { namespaceId: string; name: string; prefix: string; secretHash: string }): Promise<boolean> {
    await tx.query(`SELECT pg_advisory_xact_lock(hashtext('kairos.first-admin-key'))`);
    const { rows } = await tx.query(`SELECT 1 FROM api_keys WHERE 'admin' = ANY(scopes) AND revoked_at IS NULL LIMIT 1`);
    if (rows.length > 0) return false;
    await this.create(tx, { ...key, scopes: ['admin'] });
    return true;
  }

  async findByPrefix(db: Queryable, prefix: string): Promise<ApiKeyRow | null> {
    const { rows } = await db.query<ApiKeyRow>(
      `SELECT ${COLUMNS} FROM api_keys k JOIN namespaces n ON n.id = k.namespace_id WHERE k.prefix = $1`,
      [prefix],
    );
    return rows[0] ?? null;
  }

  async list(db: Queryable, namespace?: string): Promise<ApiKeyRow[]> {
    const { rows } = await db.query<ApiKeyRow>(
      `SELECT ${COLUMNS} FROM api_keys k JOIN namespaces n ON n.id = k.namespace_id
       WHERE $1::text IS NULL OR n.name = $1 ORDER BY k.created_at`,
      [namespace ?? null],
    );
    return rows;
  }

  /** True when the key existed and was live. */
  async revoke(db: Queryable, prefix: string): Promise<boolean> {
    const { rowCount } = await db.query(`UPDATE api_keys SET revoked_at = now() WHERE prefix = $1 AND revoked_at IS NULL`, [prefix]);
    return rowCount === 1;
  }

  async touch(db: Queryable, id: string): Promise<void> {
    await db.query(`UPDATE api_keys SET last_used_at = now() WHERE id = $1`, [id]);
  }
}
