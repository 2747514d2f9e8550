/**
 * A Redis user for one worker credential: it may touch only the keys of its queues' BullMQ queues
 * (`<prefix>:<runs queue>:*`), no pub/sub channel, and no administrative or dangerous command
 * beyond the two BullMQ asks for when it connects (INFO, for the server's version, and CLIENT
 * SETNAME/GETNAME, to name its connections).
 */
import { Redis } from 'ioredis';
import { runsQueueName } from './jobs.js';

/** The rules of `ACL SETUSER <user> ...` for a worker of `queues`. */
export function workerAclRules(password: string, prefix: string, queues: readonly string[]): string[] {
  return [
    'reset',
    'on',
    `>${password}`,
    ...queues.map((queue) => `~${prefix}:${runsQueueName(queue)}:*`),
    'resetchannels',
    '+@all',
    '-@admin',
    '-@dangerous',
    '+info',
    '+client|setname',
    '+client|getname',
  ];
}

/** The command an operator runs to make the user by hand, quoted for a shell. */
export function workerAclCommand(user: string, rules: readonly string[]): string {
  return ['redis-cli', 'ACL', 'SETUSER', user, ...rules].map((word) => (/^[\w.|:@>~+-]+$/.test(word) ? word : `'${word}'`)).join(' ');
}

/** The worker's Redis URL: the server's own, with the user's name and password. */
export function workerRedisUrl(redisUrl: string, user: string, password: string): string {
  const url = new URL(redisUrl);
  url.username = encodeURIComponent(user);
  url.password = encodeURIComponent(password);
  return url.toString();
}

/**
 * Makes (or, with `rules` null, deletes) the user on the server's Redis. False when Redis refused,
 * as a managed Redis that keeps ACLs to itself does: the caller shows the command to run instead.
 */
export async function applyWorkerAcl(redisUrl: string, user: string, rules: readonly string[] | null): Promise<boolean> {
  const redis = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1, connectTimeout: 5_000, retryStrategy: () => null });
  redis.on('error', () => undefined);
  try {
    await redis.connect();
    if (rules === null) await redis.call('ACL', 'DELUSER', user);
    else await redis.call('ACL', 'SETUSER', user, ...rules);
    return true;
  } catch {
    return false;
  } finally {
    redis.disconnect();
  }
}
