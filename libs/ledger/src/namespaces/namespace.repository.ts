/** Namespaces: the tenancy boundary. Every row a user can see belongs to exactly one. */
import type { Queryable } from '../database.js';

export interface NamespaceRow {
  id: string;
  name: string;
  signingSecret: string;
}

export const DEFAULT_NAMESPACE = 'default';

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
}
