/**
 * Who is calling: from the Authorization header (a valid API key opens its namespace with its
 * scopes, never fewer than a caller without a key has there), else from a browser session cookie
 * (the key it was opened with; state-changing requests must echo the session's CSRF token), else
 * anonymous: the default namespace with every scope, unless KAIROS_AUTH=required. Keys and
 * sessions are looked up once and cached briefly, so a revoked key stops working within seconds
 * without a database read on every request.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { Inject, Injectable } from '@nestjs/common';
import type { KairosConfig } from '@kairos/config';
import { API_SCOPES, AccessError, effectiveScopes, hashSecret, parseApiKey, scopeAllows, secretMatches, type AnonymousAccess, type ApiScope } from '@kairos/domain';
import { ApiKeyRepository, LoginSessionRepository, type ApiKeyRow, type DatabaseClock, type Db, type LoginSessionRow } from '@kairos/ledger';
import { DATABASE, DATABASE_CLOCK, DEFAULT_NAMESPACE_ID, KAIROS_CONFIG } from '@kairos/process';
import { SESSION_COOKIE, cookieValue, echoedCsrfToken } from '../auth/session-cookies.js';
import type { CallerContext } from './request-context.js';

const CACHE_MS = 5_000;
const TOUCH_EVERY_MS = 60_000;
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** What the authenticator reads of a request: its method and headers (an Express request, or a WebSocket upgrade). */
export interface AuthenticatedRequest {
  method?: string;
  headers: IncomingHttpHeaders;
}

@Injectable()
export class Authenticator {
  private readonly cache = new Map<string, { key: ApiKeyRow | null; until: number }>();
  private readonly sessionCache = new Map<string, { session: LoginSessionRow | null; until: number }>();
  private readonly touched = new Map<string, number>();

  constructor(
    @Inject(DATABASE) private readonly db: Db,
    @Inject(DATABASE_CLOCK) private readonly clock: DatabaseClock,
    @Inject(KAIROS_CONFIG) private readonly config: KairosConfig,
    @Inject(DEFAULT_NAMESPACE_ID) private readonly defaultNamespaceId: string,
    private readonly keys: ApiKeyRepository,
    private readonly sessions: LoginSessionRepository,
  ) {}

  /** The caller behind `request`, allowed `needed`; throws AccessError otherwise. */
  async authenticate(request: AuthenticatedRequest, needed: ApiScope): Promise<CallerContext> {
    const caller = await this.identify(request);
    if (!scopeAllows(caller.scopes, needed)) {
      throw new AccessError('FORBIDDEN', `this API key has the scopes ${caller.scopes.join(', ')}; the request needs ${needed}`);
    }
    return caller;
  }

  /** The live key a presented `kairos_...` token names, or null. */
  async keyOf(token: string): Promise<ApiKeyRow | null> {
    const parsed = parseApiKey(token);
    if (!parsed) return null;
    const key = await this.lookup(parsed.prefix);
    return key && key.revokedAt === null && secretMatches(parsed.secret, key.secretHash) ? key : null;
  }

  /** Forgets a session at once on this replica (logout); others notice within the cache time. */
  forgetSession(token: string): void {
    this.sessionCache.delete(hashSecret(token));
  }

  /** What a request without a key may do, or null when it may do nothing. */
  private get anonymous(): AnonymousAccess | null {
    return this.config.api.auth === 'optional' ? { namespaceId: this.defaultNamespaceId, scopes: API_SCOPES } : null;
  }

  private async identify(request: AuthenticatedRequest): Promise<CallerContext> {
    const authorization = request.headers.authorization;
    if (authorization !== undefined && authorization !== '') return this.fromAuthorization(authorization);
    const sessionToken = cookieValue(request.headers, SESSION_COOKIE);
    if (sessionToken) return this.fromSession(sessionToken, request);
    const anonymous = this.anonymous;
    if (anonymous === null) {
      throw new AccessError('UNAUTHORIZED', 'an API key is required: send "Authorization: Bearer <key>" (create one with: kairos keys create)');
    }
    return { namespaceId: anonymous.namespaceId, actor: 'anonymous', scopes: [...anonymous.scopes] };
  }

  private async fromAuthorization(authorization: string): Promise<CallerContext> {
    const token = /^Bearer\s+(\S+)$/i.exec(authorization)?.[1];
    if (token === undefined || !parseApiKey(token)) throw new AccessError('UNAUTHORIZED', 'the Authorization header must be "Bearer kairos_<prefix>_<secret>"');
    const key = await this.keyOf(token);
    if (!key) throw new AccessError('UNAUTHORIZED', 'this API key is unknown or revoked');
    this.touch(key.id);
    return { namespaceId: key.namespaceId, actor: `key:${key.name}`, scopes: effectiveScopes(key, this.anonymous) };
  }

  private async fromSession(token: string, request: AuthenticatedRequest): Promise<CallerContext> {
    const tokenHash = hashSecret(token);
    let cached = this.sessionCache.get(tokenHash);
    if (!cached || cached.until <= Date.now()) {
      cached = { session: await this.sessions.findLive(this.db, tokenHash), until: Date.now() + CACHE_MS };
      this.sessionCache.set(tokenHash, cached);
    }
    const session = cached.session;
    // The session's expiry was set by the database's clock; it is read by the same clock.
    if (!session || session.expiresAt.getTime() <= this.clock.now()) {
      throw new AccessError('UNAUTHORIZED', 'the session has ended: log in again (POST /auth/login with {"apiKey": "kairos_..."})');
    }
    if (!SAFE_METHODS.has((request.method ?? 'GET').toUpperCase())) {
      const echoed = echoedCsrfToken(request.headers);
      if (echoed === undefined || !secretMatches(echoed, session.csrfHash)) {
        throw new AccessError('CSRF_TOKEN_INVALID', 'a request authenticated by the session cookie must echo the XSRF-TOKEN cookie in an X-CSRF-Token header');
      }
    }
    this.touch(session.keyId);
    return { namespaceId: session.namespaceId, actor: `key:${session.keyName}`, scopes: effectiveScopes(session, this.anonymous) };
  }

  private async lookup(prefix: string): Promise<ApiKeyRow | null> {
    const cached = this.cache.get(prefix);
    if (cached && cached.until > Date.now()) return cached.key;
    const key = await this.keys.findByPrefix(this.db, prefix);
    this.cache.set(prefix, { key, until: Date.now() + CACHE_MS });
    return key;
  }

  /** Records when a key was last used, at most once a minute per key. */
  private touch(keyId: string): void {
    const last = this.touched.get(keyId) ?? 0;
    if (Date.now() - last < TOUCH_EVERY_MS) return;
    this.touched.set(keyId, Date.now());
    void this.keys.touch(this.db, keyId).catch(() => undefined);
  }
}
