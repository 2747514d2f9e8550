/**
 * KAIROS_RATE_LIMIT requests per second per caller: per API key (or browser session) when one is
 * sent, per client address otherwise. On the Redis transport it is counted in Redis in one-second
 * windows on Redis's clock, so every API replica shares the count; on the Postgres transport each
 * API process counts in its own memory (a write to the ledger per request would load the very
 * database the limit protects), so N replicas let through N times the limit. Beyond it a request
 * gets 429 RATE_LIMITED with Retry-After. Health checks and metrics are never limited. If Redis
 * cannot count, requests pass: the limit protects the API, it must not take it down with Redis.
 */
import { Inject, Injectable, Logger, type NestMiddleware } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import type { KairosConfig } from '@kairos/config';
import { hashSecret, parseApiKey } from '@kairos/domain';
import type { Transport } from '@kairos/queue';
import { KAIROS_CONFIG, TRANSPORT } from '@kairos/process';
import { SESSION_COOKIE, cookieValue } from '../auth/session-cookies.js';

const EXEMPT = /^\/(health|metrics)(\/|$|\?)/;

// Counts the request in the current second of Redis's clock; answers the count and the
// microseconds left in that second. The second's key is made from KEYS[1], whose hash tag (the
// caller) puts it in the same slot, as a Redis Cluster requires of every key a script touches.
const COUNT_SCRIPT = `
local now = redis.call('TIME')
local key = KEYS[1] .. ':' .. now[1]
local n = redis.call('INCR', key)
if n == 1 then redis.call('EXPIRE', key, 2) end
return { n, 1000000 - tonumber(now[2]) }`;

/** Who a request is counted against: its key's prefix, its session, or its address. */
export function rateLimitSubject(request: Request): string {
  const token = /^Bearer\s+(\S+)$/i.exec(request.headers.authorization ?? '')?.[1];
  const key = token === undefined ? null : parseApiKey(token);
  if (key) return `key:${key.prefix}`;
  const session = cookieValue(request.headers, SESSION_COOKIE);
  if (session) return `session:${hashSecret(session).slice(0, 32)}`;
  return `address:${request.socket.remoteAddress ?? 'unknown'}`;
}

/** A process's own counts, in one-second windows of its clock: [count, microseconds left in the second]. */
export class LocalRateCounter {
  private readonly counts = new Map<string, { second: number; n: number }>();

  count(subject: string, now = Date.now()): [number, number] {
    const second = Math.floor(now / 1_000);
    const entry = this.counts.get(subject);
    const n = entry?.second === second ? entry.n + 1 : 1;
    if (!entry && this.counts.size >= LOCAL_SUBJECTS) this.sweep(second);
    this.counts.set(subject, { second, n });
    return [n, (1_000 - (now % 1_000)) * 1_000];
  }

  /** Forgets callers not seen this second, so the map holds only the current window's. */
  private sweep(second: number): void {
    for (const [subject, entry] of this.counts) if (entry.second !== second) this.counts.delete(subject);
  }
}

/** Subjects kept before a sweep of stale ones. */
const LOCAL_SUBJECTS = 10_000;

@Injectable()
export class RateLimitMiddleware implements NestMiddleware {
  private readonly logger = new Logger('RateLimit');
  private lastWarning = 0;
  private readonly local = new LocalRateCounter();

  constructor(
    @Inject(KAIROS_CONFIG) private readonly config: KairosConfig,
    @Inject(TRANSPORT) private readonly transport: Transport,
  ) {}

  async use(request: Request, response: Response, next: NextFunction): Promise<void> {
    const limit = this.config.api.rateLimit;
    if (limit === 0 || EXEMPT.test(request.originalUrl)) return next();
    const redis = this.transport.redis;
    let counted: [number, number];
    try {
      counted = redis
        ? ((await redis.eval(COUNT_SCRIPT, 1, `${this.config.queuePrefix}:rate:{${rateLimitSubject(request)}}`)) as [number, number])
        : this.local.count(rateLimitSubject(request));
    } catch (error) {
      if (Date.now() - this.lastWarning > 60_000) {
        this.lastWarning = Date.now();
        this.logger.warn(`rate limits are not enforced while Redis cannot count requests: ${(error as Error).message}`);
      }
      return next();
    }
    const [count, microsLeft] = counted;
    if (count <= limit) return next();
    response
      .status(429)
      .setHeader('retry-after', String(Math.max(1, Math.ceil(microsLeft / 1_000_000))))
      .json({ code: 'RATE_LIMITED', message: `more than ${limit} requests in one second from this caller (KAIROS_RATE_LIMIT); retry after the Retry-After header's seconds`, field: null });
  }
}
