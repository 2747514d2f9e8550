/**
 * Who is calling, from the Authorization header: a valid API key opens its namespace with its
 * scopes (never fewer than a caller without a key has there); no key opens the default namespace
 * with every scope, unless KAIROS_AUTH=required.
 * Keys are looked up once and cached briefly, so a revoked key stops working within seconds
 * without a database read on every request.
 */
import { Inject, Injectable } from '@nestjs/common';
import type { KairosConfig } from '@kairos/config';
import { API_SCOPES, AccessError, effectiveScopes, parseApiKey, scopeAllows, secretMatches, type AnonymousAccess, type ApiScope } from '@kairos/domain';
import { ApiKeyRepository, type ApiKeyRow, type Db } from '@kairos/ledger';
import { DATABASE, DEFAULT_NAMESPACE_ID, KAIROS_CONFIG } from '@kairos/runtime';
import type { CallerContext } from './request-context.js';

const CACHE_MS = 5_000;
const TOUCH_EVERY_MS = 60_000;

@Injectable()
export class Authenticator {
  private readonly cache = new Map<string, { key: ApiKeyRow | null; until: number }>();
  private readonly touched = new Map<string, number>();

  constructor(
    @Inject(DATABASE) private readonly db: Db,
    @Inject(KAIROS_CONFIG) private readonly config: KairosConfig,
    @Inject(DEFAULT_NAMESPACE_ID) private readonly defaultNamespaceId: string,
    private readonly keys: ApiKeyRepository,
  ) {}

  /** The caller behind `authorization`, allowed `needed`; throws AccessError otherwise. */
  async authenticate(authorization: string | undefined, needed: ApiScope): Promise<CallerContext> {
    const caller = await this.identify(authorization);
    if (!scopeAllows(caller.scopes, needed)) {
      throw new AccessError('FORBIDDEN', `this API key has the scopes ${caller.scopes.join(', ')}; the request needs ${needed}`);
    }
    return caller;
  }

  /** What a request without a key may do, or null when it may do nothing. */
  private get anonymous(): AnonymousAccess | null {
    return this.config.api.auth === 'optional' ? { namespaceId: this.defaultNamespaceId, scopes: API_SCOPES } : null;
  }

  private async identify(authorization: string | undefined): Promise<CallerContext> {
    if (authorization === undefined || authorization === '') {
      const anonymous = this.anonymous;
      if (anonymous === null) {
        throw new AccessError('UNAUTHORIZED', 'an API key is required: send "Authorization: Bearer <key>" (create one with: kairos keys create)');
      }
      return { namespaceId: anonymous.namespaceId, actor: 'anonymous', scopes: [...anonymous.scopes] };
    }
    const token = /^Bearer\s+(\S+)$/i.exec(authorization)?.[1];
    const parsed = token === undefined ? null : parseApiKey(token);
    if (!parsed) throw new AccessError('UNAUTHORIZED', 'the Authorization header must be "Bearer kairos_<prefix>_<secret>"');
    const key = await this.lookup(parsed.prefix);
    if (!key || key.revokedAt !== null || !secretMatches(parsed.secret, key.secretHash)) {
      throw new AccessError('UNAUTHORIZED', 'this API key is unknown or revoked');
    }
    this.touch(key);
    return { namespaceId: key.namespaceId, actor: `key:${key.name}`, scopes: effectiveScopes(key, this.anonymous) };
  }

  private async lookup(prefix: string): Promise<ApiKeyRow | null> {
    const cached = this.cache.get(prefix);
    if (cached && cached.until > Date.now()) return cached.key;
    const key = await this.keys.findByPrefix(this.db, prefix);
    this.cache.set(prefix, { key, until: Date.now() + CACHE_MS });
    return key;
  }

  /** Records when a key was last used, at most once a minute per key. */
  private touch(key: ApiKeyRow): void {
    const last = this.touched.get(key.id) ?? 0;
    if (Date.now() - last < TOUCH_EVERY_MS) return;
    this.touched.set(key.id, Date.now());
    void this.keys.touch(this.db, key.id).catch(() => undefined);
  }
}
