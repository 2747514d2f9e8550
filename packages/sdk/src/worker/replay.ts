/**
 * Replay safety: what a run's stored checkpoints say about the checkpoint its code asks for now.
 * The stored checkpoints, in the order they began, are what older attempts of the run did; the
 * code reaches them again on every attempt. A name the run did not store is new work, which is
 * only right once every checkpoint the run stored has been reached: asked for while some stored one
 * is still ahead, it means the code no longer takes the path the run recorded (a deploy changed it
 * under the run), and carrying on would do again, or skip, what the run already did.
 * durable-functions.ts asks this for every checkpoint and patch of an attempt.
 */

/** The checkpoint name prefix of ctx.patched's markers; a step may not take it. */
export const PATCH_PREFIX = 'patch:';

/**
 * The checkpoint name prefix of the marker a step leaves when it throws out of ctx.step (its own
 * retries spent, or a NonRetryableError): the code asked for it, so a replay that asks for it
 * again, and runs it again, takes the path the run recorded, also where the handler caught the
 * error and went on to a step of its own. A step may not take it.
 */
export const FAILED_PREFIX = 'failed:';

/** Whether a stored name is a marker (ctx.patched's, or a failed step's) rather than a checkpoint the code reaches. */
function isMarker(name: string): boolean {
  return name.startsWith(PATCH_PREFIX) || name.startsWith(FAILED_PREFIX);
}

export type ReplayAnswer =
  /** The run stored this checkpoint: answer what it stored. */
  | { kind: 'stored' }
  /** New work, past everything the run stored, or a step that failed before and runs again. */
  | { kind: 'new' }
  /** The code diverged: `stored` is the first stored checkpoint it has not reached. */
  | { kind: 'diverged'; stored: string };

/**
 * A run's stored checkpoint names, in the order they began, as one attempt replays them. `reached`
 * is the names the code asked for so far in the attempt (steps started side by side included, so
 * parallel steps reach their stored names whatever order they ask in); it only grows within an
 * attempt, which lets the first unreached name be found by a cursor that only moves forward.
 */
export class ReplayHistory {
  private readonly names: ReadonlySet<string>;
  /** No stored name before this index is unreached (or each is a patch marker). */
  private ahead = 0;

  constructor(private readonly order: readonly string[]) {
    this.names = new Set(order);
  }

  /**
   * What checkpoint `asked` is on this replay. Markers never make a divergence: code that stopped
   * calling ctx.patched replays as before, and a step that failed before runs again wherever it is.
   */
  answer(reached: ReadonlySet<string>, asked: string): ReplayAnswer {
    if (this.names.has(asked)) return { kind: 'stored' };
    if (this.names.has(`${FAILED_PREFIX}${asked}`)) return { kind: 'new' };
    const ahead = this.firstUnreached(reached);
    return ahead === null ? { kind: 'new' } : { kind: 'diverged', stored: ahead };
  }

  /**
   * ctx.patched(id)'s answer when the run has no marker for it: false while the run stored
   * checkpoints the code has not reached (older code, without this call, passed here), true when
   * the run meets the call for the first time.
   */
  firstPatchAnswer(reached: ReadonlySet<string>): boolean {
    return this.firstUnreached(reached) === null;
  }

  /** The first stored checkpoint, markers aside, that the code has not reached; null when none is left. */
  firstUnreached(reached: ReadonlySet<string>): string | null {
    while (this.ahead < this.order.length && (isMarker(this.order[this.ahead]!) || reached.has(this.order[this.ahead]!))) this.ahead += 1;
    return this.order[this.ahead] ?? null;
  }
}

/** A checkpoint as its code names it: `step "charge"`, `sleep 2`, `the wait for signal "approval"`, `the 2nd wait for event "order.shipped"`. */
export function checkpointInWords(name: string): string {
  const sleep = /^sleep#(\d+)$/.exec(name);
  if (sleep) return `sleep ${sleep[1]}`;
  if (name.startsWith('signal:')) return `the wait for signal ${JSON.stringify(name.slice('signal:'.length))}`;
  const event = /^event:(.+?)(?:#(\d+))?$/.exec(name);
  if (event) return `the ${event[2] === undefined ? '' : `${ordinal(Number(event[2]))} `}wait for event ${JSON.stringify(event[1])}`;
  if (name.startsWith(PATCH_PREFIX)) return `ctx.patched(${JSON.stringify(name.slice(PATCH_PREFIX.length))})`;
  if (name.startsWith(FAILED_PREFIX)) return `the failure of step ${JSON.stringify(name.slice(FAILED_PREFIX.length))}`;
  return `step ${JSON.stringify(name)}`;
}

function ordinal(n: number): string {
  const tens = n % 100;
  const suffix = tens >= 11 && tens <= 13 ? 'th' : (['th', 'st', 'nd', 'rd'][n % 10] ?? 'th');
  return `${n}${suffix}`;
}

/**
 * Thrown through the handler when its code asked for another checkpoint than the one its run
 * stored at that point. The attempt fails with reason code NONDETERMINISTIC_REPLAY and is retried
 * under the run's policy: a worker of the run's own version may still finish it.
 */
export class NondeterministicReplay extends Error {
  readonly code = 'NONDETERMINISTIC_REPLAY';

  constructor(
    runId: string,
    /** The checkpoint the code asked for, which the run did not store. */
    readonly asked: string,
    /** The first stored checkpoint the code did not reach. */
    readonly stored: string,
  ) {
    super(
      `the code asks for ${checkpointInWords(asked)} where run ${runId} stored ${checkpointInWords(stored)} (NONDETERMINISTIC_REPLAY): ` +
        `the handler changed under a run in flight; keep the old path for runs that passed here, ` +
        `with \`if (await ctx.patched('<change>')) { new code } else { old code }\``,
    );
    this.name = 'NondeterministicReplay';
  }
}
