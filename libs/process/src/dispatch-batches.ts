/**
 * Which runs of one dispatch travel together in one BullMQ job. Every job costs the transport the
 * same work (the scripts that add, activate and complete it, and their encoding), so a herd or a
 * backlog handed over one job per run pays that work per run; a batch pays it once for up to
 * KAIROS_DISPATCH_BATCH runs. Runs travel together when they are due together: all already due,
 * or due at the same instant, and of the same priority (a batch is placed in its queue as one job).
 * A lone run travels alone, as before, so a quiet queue keeps its latency and its precise starts.
 * A run a limit held and released travels alone under its own job id (DispatchItem.jobId).
 */
import { DEFAULT_PRIORITY, type DispatchItem } from '@kairos/domain';

/** The runs of one job: one run (a plain job, its id the run's) or several (a batch job). */
export interface JobGroup {
  items: DispatchItem[];
  /** The instant the runs share, when it is still ahead; null when they are all due. */
  dueAt: number | null;
}

/**
 * Splits `items` (of one shard) into jobs of at most `max` runs, in their order: runs due at `now`
 * or before go together whatever their instant, runs still ahead together with those of the same
 * instant; runs of different priorities never share a job.
 */
export function groupForJobs(items: readonly DispatchItem[], max: number, now: number): JobGroup[] {
  if (max <= 1 || items.length <= 1) return items.map((item) => alone(item, now));
  const open = new Map<string, JobGroup>();
  const groups: JobGroup[] = [];
  for (const item of items) {
    if (item.jobId) {
      groups.push(alone(item, now));
      continue;
    }
    const due = item.availableAt.getTime();
    const dueAt = due > now ? due : null;
    const key = `${item.priority ?? DEFAULT_PRIORITY}@${dueAt ?? 'now'}`;
    let group = open.get(key);
    if (!group || group.items.length >= max) {
      group = { items: [], dueAt };
      open.set(key, group);
      groups.push(group);
    }
    group.items.push(item);
  }
  return groups;
}

function alone(item: DispatchItem, now: number): JobGroup {
  const due = item.availableAt.getTime();
  return { items: [item], dueAt: due > now ? due : null };
}

/**
 * The id of a batch job, from the runs it carries: the same runs handed over twice (the relay after
 * a refusal, the reconciler) make the same id, which BullMQ adds once. The first run's id keeps it
 * readable in Bull Board; a hash of them all keeps two batches that start alike apart.
 */
export function batchJobId(runIds: readonly string[]): string {
  let hash = 0x811c9dc5;
  for (const id of runIds) {
    for (let i = 0; i < id.length; i += 1) hash = Math.imul(hash ^ id.charCodeAt(i), 0x01000193) >>> 0;
    hash = Math.imul(hash ^ 0x2c, 0x01000193) >>> 0;
  }
  return `batch-${runIds[0]}-${runIds.length}-${hash.toString(16).padStart(8, '0')}`;
}
