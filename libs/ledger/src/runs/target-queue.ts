/**
 * The Kairos queue a run travels on (not its runs queue, the BullMQ queue named after it), read
 * from its target in SQL: a handler target's `queue`, else the default queue (HTTP targets, and
 * handler targets stored before targets named queues).
 */
import { DEFAULT_QUEUE } from '@kairos/domain';

export const targetQueueSql = (alias: string): string => `coalesce(${alias}.target->>'queue', '${DEFAULT_QUEUE}')`;
