/**
 * A Redis user for one worker credential: it may touch only the keys of its queues' BullMQ queues
 * (`<prefix>:<runs queue>:*` unsharded, `{<prefix>:<runs queue>:<n>}:<runs queue>:*` for each shard,
 * whatever their number), no pub/sub channel, and no administrative or dangerous command
 * beyond the two BullMQ asks for when it connects (INFO, for the server's version, and CLIENT
 * SETNAME/GETNAME, to name its connections).
 */
import type { Redis } from 'ioredis';
import { runsQueueName } from './jobs.js';
import { shardPrefix } from './shards.js';
import { adminConnection, dataNodes, type RedisTransportConfig } from './redis.js';

/**
 * The rules of `ACL SETUSER <user> ...` for a worker of `queues`; `unsharded` is BullMQ's prefix of
 * one shard (see bullPrefix), `queuePrefix` the deployment's (KAIROS_QUEUE_PREFIX).
 */
export function workerAclRules(password: string, unsharded: string, queuePrefix: string, queues: readonly string[]): string[] {
  return [
    'reset',
    'on',
    `>${password}`,
    ...queues.flatMap((queue) => {
      const name = runsQueueName(queue);
      return [`~${unsharded}:${name}:*`, `~${shardPrefix(unsharded, queuePrefix, name, '[0-9]*')}:${name}:*`];
    }),
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
 * Makes (or, with `rules` null, deletes) the user on the server's Redis: on a Cluster on every node
 * it knows, under Sentinels on the master and the replicas they know of (ACL users are not
 * replicated, and a replica may become the master). False when Redis refused, as a managed Redis
 * that keeps ACLs to itself does: the caller shows the command to run instead.
 */
export async function applyWorkerAcl(config: RedisTransportConfig, user: string, rules: readonly string[] | null): Promise<boolean> {
  const redis = adminConnection(config);
  let extra: Redis[] = [];
  try {
    await redis.connect();
    const found = await dataNodes(config, redis);
    extra = found.extra;
    for (const node of found.nodes) {
      if (node.status === 'wait') await node.connect();
      if (rules === null) await node.call('ACL', 'DELUSER', user);
      else await node.call('ACL', 'SETUSER', user, ...rules);
    }
    return true;
  } catch {
    return false;
  } finally {
    redis.disconnect();
    for (const node of extra) node.disconnect();
  }
}
