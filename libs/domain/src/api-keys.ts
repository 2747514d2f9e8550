/**
 * API keys: `kairos_<prefix>_<secret>`. The prefix names the key in listings and logs; only the
 * sha256 of the secret is stored, and a presented key is compared in constant time.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

export const API_SCOPES = ['read', 'write', 'admin'] as const;
export type ApiScope = (typeof API_SCOPES)[number];

export interface IssuedKey {
  /** The whole key, shown once to whoever created it. */
  token: string;
  prefix: string;
  secretHash: string;
}

const KEY = /^kairos_([0-9a-f]{12})_([0-9A-Za-z_-]{43})$/;

export function issueApiKey(): IssuedKey {
  const prefix = randomBytes(6).toString('hex');
  const secret = randomBytes(32).toString('base64url');
  return { token: `kairos_${prefix}_${secret}`, prefix, secretHash: hashSecret(secret) };
}

/** The prefix and secret of a well-formed key, or null. */
export function parseApiKey(token: string): { prefix: string; secret: string } | null {
  const match = KEY.exec(token);
  return match ? { prefix: match[1]!, secret: match[2]! } : null;
}

export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

export function secretMatches(secret: string, storedHash: string): boolean {
  const presented = Buffer.from(hashSecret(secret), 'hex');
  const stored = Buffer.from(storedHash, 'hex');
  return presented.length === stored.length && timingSafeEqual(presented, stored);
}

/** Admin implies write, and write implies read. */
export function scopeAllows(granted: readonly ApiScope[], needed: ApiScope): boolean {
  const rank: Record<ApiScope, number> = { read: 0, write: 1, admin: 2 };
  return granted.some((scope) => rank[scope] >= rank[needed]);
}

/** Who a request without a key acts as, when such requests are let in (KAIROS_AUTH=optional). */
export interface AnonymousAccess {
  namespaceId: string;
  scopes: readonly ApiScope[];
}

/**
 * A key is never weaker than no key: where anonymous callers are let in, a key of the namespace
 * they act in has their scopes there too (sending a read key must not cost its holder the writes
 * they could make by leaving it out). Keys of other namespaces, and every key when auth is
 * required, have exactly their own scopes.
 */
export function effectiveScopes(key: { namespaceId: string; scopes: readonly ApiScope[] }, anonymous: AnonymousAccess | null): ApiScope[] {
  const granted = new Set<ApiScope>(key.scopes);
  if (anonymous && anonymous.namespaceId === key.namespaceId) for (const scope of anonymous.scopes) granted.add(scope);
  return API_SCOPES.filter((scope) => granted.has(scope));
}
