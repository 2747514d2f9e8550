/** Browser sessions opened with an API key (POST /auth/login): stored hashed, expiring, ended by logout or by revoking the key. */
import { newId, type ApiScope } from '@kairos/domain';
import type { Queryable } from '../database.js';

export interface LoginSessionRow {
  id: string;
  csrfHash: string;
  expiresAt: Date;
  keyId: string;
  keyName: string;
  namespaceId: string;
  scopes: ApiScope[];
}

export class LoginSessionRepository {
  async create(db: Queryable, s: { tokenHash: string; csrfHash: string; apiKeyId: string; ttlMs: number }): Promise<Date> {
    const { rows } = await db.query<{ expiresAt: Date }>(
      `INSERT INTO login_sessions (id, token_hash, csrf_hash, api_key_id, expires_at)
       VALUES ($1, $2, $3, $4, now() + $5 * interval '1 millisecond')
       RETURNING expires_at AS "expiresAt"`,
      [newId(), s.tokenHash, s.csrfHash, s.apiKeyId, s.ttlMs],
    );
    return rows[0]!.expiresAt;
  }

  /** The live session with this token hash (unexpired, its key not revoked), or null. */
  async findLive(db: Queryable, tokenHash: string): Promise<LoginSessionRow | null> {
    const { rows } = await db.query<LoginSessionRow>(
      `SELECT s.id, s.csrf_hash AS "csrfHash", s.expires_at AS "expiresAt", k.id AS "keyId", k.name AS "keyName",
              k.namespace_id AS "namespaceId", k.scopes
       FROM login_sessions s JOIN api_keys k ON k.id = s.api_key_id
       WHERE s.token_hash = $1 AND s.expires_at > now() AND k.revoked_at IS NULL`,
      [tokenHash],
    );
    return rows[0] ?? null;
  }

  /** Ends the session, and sweeps expired ones while at it. */
  async delete(db: Queryable, tokenHash: string): Promise<void> {
    await db.query(`DELETE FROM login_sessions WHERE token_hash = $1 OR expires_at < now()`, [tokenHash]);
  }
}
