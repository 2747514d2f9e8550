/**
 * The queue a run travels on, read from its target in SQL: a handler target's `queue`, else the
 * default queue (HTTP targets, and handler targets stored before targets named queues).
 */
import { DEFAULT_QUEUE } from '@kairos/domain';

export const runQueueSql = (alias: string): string => `coalesce(${alias}.target->>'queue', '${DEFAULT_QUEUE}')`;
