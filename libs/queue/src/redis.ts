/** Redis connections for BullMQ. */
import type { ConnectionOptions } from 'bullmq';
import { Redis, type RedisOptions } from 'ioredis';

/**
 * A connection for producers (Queue): commands fail fast while Redis is away instead of piling up,
 * so the relay notices, keeps the rows unenqueued in Postgres and retries on its next pass.
 */
export function producerConnection(redisUrl: string): Redis {
  const redis = new Redis(redisUrl, { ...common(), enableOfflineQueue: false, maxRetriesPerRequest: 1 });
  redis.on('error', () => undefined);
  return redis;
}

/** Connection options for consumers (Worker): BullMQ requires blocking commands to retry forever. */
export function consumerConnectionOptions(redisUrl: string): ConnectionOptions {
  return { url: redisUrl, maxRetriesPerRequest: null, retryStrategy: (times: number) => Math.min(times * 200, 2_000) };
}

function common(): RedisOptions {
  return { lazyConnect: false, retryStrategy: (times) => Math.min(times * 200, 2_000), connectTimeout: 5_000 };
}

/** Deletes every key under `prefix:`: what a deployment (or a test run) with that prefix left in Redis. */
export async function deleteKeysWithPrefix(redisUrl: string, prefix: string): Promise<void> {
  const redis = new Redis(redisUrl);
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length > 0) await redis.del(...keys);
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
}
