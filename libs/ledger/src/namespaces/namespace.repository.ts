/** Namespaces: the tenancy boundary. Every row a user can see belongs to exactly one. */
import { randomBytes } from 'node:crypto';
import type { Queryable } from '../database.js';

export interface NamespaceRow {
  id: string;
  name: string;
  signingSecret: string;
}

export const DEFAULT_NAMESPACE = 'default';

/** The secrets deliveries of a namespace are signed with: the current one, and the previous one during its grace. */
export interface SigningSecrets {
  secret: string;
  previous: string | null;
  previousValidUntil: Date | null;
}

/** A new signing secret: 32 random bytes, hex, like the ones namespaces are created with. */
export function newSigningSecret(): string {
  return randomBytes(32).toString('hex');
}

export class NamespaceRepository {
  async getByName(db: Queryable, name: string): Promise<NamespaceRow | null> {
    const { rows } = await db.query<NamespaceRow>(
      `SELECT id, name, signing_secret AS "signingSecret" FROM namespaces WHERE name = $1`,
      [name],
    );
    return rows[0] ?? null;
  }

  async getById(db: Queryable, id: string): Promise<NamespaceRow | null> {
    const { rows } = await db.query<NamespaceRow>(
      `SELECT id, name, signing_secret AS "signingSecret" FROM namespaces WHERE id = $1`,
      [id],
    );
    return rows[0] ?? null;
  }

  /** The namespace's signing secrets, the previous one only while its grace lasts (on the database clock). */
  async signingSecrets(db: Queryable, id: string): Promise<SigningSecrets | null> {
    const { rows } = await db.query<SigningSecrets>(
      `SELECT signing_secret AS secret,
              CASE WHEN previous_secret_valid_until > now() THEN previous_signing_secret END AS previous,
              CASE WHEN previous_secret_valid_until > now() THEN previous_secret_valid_until END AS "previousValidUntil"
       FROM namespaces WHERE id = $1`,
      [id],
    );
    return rows[0] ?? null;
  }

  /**
   * Replaces the signing secret with a new one; the one it replaces keeps signing beside it for
   * `graceMs`. A second rotation within the grace drops the oldest secret at once: receivers
   * should hold at most two.
   */
  async rotateSigningSecret(db: Queryable, id: string, graceMs: number): Promise<{ secret: string; previousValidUntil: Date } | null> {
    const { rows } = await db.query<{ secret: string; previousValidUntil: Date }>(
      `UPDATE namespaces SET previous_signing_secret = signing_secret, signing_secret = $2,
              previous_secret_valid_until = now() + $3 * interval '1 millisecond'
       WHERE id = $1
       RETURNING signing_secret AS secret, previous_secret_valid_until AS "previousValidUntil"`,
      [id, newSigningSecret(), graceMs],
    );
    return rows[0] ?? null;
  }
}
