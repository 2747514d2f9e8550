/**
 * KAIROS_RATE_LIMIT requests per second per caller: per API key (or browser session) when one is
 * sent, per client address otherwise. Counted in Redis in one-second windows on Redis's clock, so
 * every API replica shares the count; beyond it a request gets 429 RATE_LIMITED with Retry-After.
 * Health checks and metrics are never limited. If Redis cannot count, requests pass: the limit
 * protects the API, it must not take it down with Redis.
 */
import { Inject, Injectable, Logger, type NestMiddleware } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import type { Redis } from 'ioredis';
import type { KairosConfig } from '@kairos/config';
import { hashSecret, parseApiKey } from '@kairos/domain';
import { KAIROS_CONFIG, REDIS_PRODUCER } from '@kairos/runtime';
import { SESSION_COOKIE, cookieValue } from '../auth/session-cookies.js';

const EXEMPT = /^\/(health|metrics)(\/|$|\?)/;

// Counts the request in the current second of Redis's clock; answers the count and the
// microseconds left in that second.
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

@Injectable()
export class RateLimitMiddleware implements NestMiddleware {
  private readonly logger = new Logger('RateLimit');
  private lastWarning = 0;

  constructor(
    @Inject(KAIROS_CONFIG) private readonly config: KairosConfig,
    @Inject(REDIS_PRODUCER) private readonly redis: Redis,
  ) {}

  async use(request: Request, response: Response, next: NextFunction): Promise<void> {
    const limit = this.config.api.rateLimit;
    if (limit === 0 || EXEMPT.test(request.originalUrl)) return next();
    let counted: [number, number];
    try {
      counted = (await this.redis.eval(COUNT_SCRIPT, 1, `${this.config.queuePrefix}:rate:${rateLimitSubject(request)}`)) as [number, number];
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
