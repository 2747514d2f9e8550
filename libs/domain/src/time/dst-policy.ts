/**
 * A schedule's DST policy as declared, and what it resolves to for its cron expression: `auto`
 * follows the Vixie cron convention, every other value means exactly itself.
 */
import type { CronExpression } from './cron.js';

export const DST_GAP_POLICIES = ['auto', 'shift', 'skip'] as const;
/**
 * A wall time skipped by a spring-forward: `shift` fires it read with the offset before the jump
 * (RFC 5545), `skip` does not fire it, `auto` decides by the expression (see resolveDstPolicy).
 */
export type DstGapPolicy = (typeof DST_GAP_POLICIES)[number];

export const DST_OVERLAP_POLICIES = ['auto', 'first', 'last', 'both'] as const;
/** A wall time repeated by a fall-back: fire its first occurrence, its last, both, or decide by the expression (`auto`). */
export type DstOverlapPolicy = (typeof DST_OVERLAP_POLICIES)[number];

export interface DstPolicy {
  gap: DstGapPolicy;
  overlap: DstOverlapPolicy;
}

/** A policy with `auto` decided: what fire instants are computed with. */
export interface ResolvedDstPolicy {
  gap: Exclude<DstGapPolicy, 'auto'>;
  overlap: Exclude<DstOverlapPolicy, 'auto'>;
}

export const DEFAULT_DST_POLICY: DstPolicy = Object.freeze<DstPolicy>({ gap: 'auto', overlap: 'auto' });

/** `auto` for an expression that follows real time: every real instant its fields match fires, a wall time that does not exist does not. */
const REAL_TIME: ResolvedDstPolicy = Object.freeze<ResolvedDstPolicy>({ gap: 'skip', overlap: 'both' });
/** `auto` for an expression at fixed times of day: each fires once, a repeated one at its first instant, a skipped one shifted past the gap. */
const FIXED_TIME: ResolvedDstPolicy = Object.freeze<ResolvedDstPolicy>({ gap: 'shift', overlap: 'first' });

/**
 * The policy the expression fires by. `auto` is Vixie cron's rule: when the minute or hour field
 * starts with `*` (`0 * * * *`, `*\/15 * * * *`, `* 9 * * *`) the job follows real time, so a
 * repeated hour fires at both instants and missing wall times are skipped; otherwise (`30 2 * * *`,
 * `0 9-17 * * *`) the job runs at fixed times, each once: the first instant of a repeated wall
 * time, a missing one shifted past the gap. Explicit values pass through unchanged.
 */
export function resolveDstPolicy(cron: CronExpression, dst: DstPolicy): ResolvedDstPolicy {
  const auto = cron.followsRealTime ? REAL_TIME : FIXED_TIME;
  return {
    gap: dst.gap === 'auto' ? auto.gap : dst.gap,
    overlap: dst.overlap === 'auto' ? auto.overlap : dst.overlap,
  };
}

/** The policy of a wall time that is not a cron's (an interval's slot moved by a calendar): `auto` as for fixed times of day. */
export function resolveFixedTimePolicy(dst: DstPolicy): ResolvedDstPolicy {
  return { gap: dst.gap === 'auto' ? FIXED_TIME.gap : dst.gap, overlap: dst.overlap === 'auto' ? FIXED_TIME.overlap : dst.overlap };
}

/** A declared policy (`auto` stays `auto`) with what it resolves to, as the API and the CLI show it. */
export interface DstExplanation extends DstPolicy {
  /** The policy fire instants are computed with; null when DST does not apply (an interval or one-shot). */
  resolved: ResolvedDstPolicy | null;
  /** One line for people: `gap auto (skip), overlap auto (both): ...`. */
  description: string;
}

/**
 * What a declared policy means for a schedule's timing: resolved for a cron expression, not
 * applicable to an interval or a one-shot (they are instants, not wall times). `cron` is null for those.
 */
export function explainDstPolicy(cron: CronExpression | null, dst: DstPolicy): DstExplanation {
  // Object.assign, not a spread with fields after it: V8 takes that slow path at several µs a view.
  if (cron === null) {
    return Object.assign({}, dst, { resolved: null, description: 'not applicable: intervals and one-shot timers fire at instants, not wall times' });
  }
  const resolved = resolveDstPolicy(cron, dst);
  const policies = summarizeDstPolicy(dst, resolved);
  if (dst.gap !== 'auto' && dst.overlap !== 'auto') return Object.assign({}, dst, { resolved, description: policies });
  const why = cron.followsRealTime
    ? 'the minute or hour field starts with *, so it follows real time'
    : 'neither the minute nor the hour field starts with *, so it runs at fixed times of day';
  return Object.assign({}, dst, { resolved, description: `${policies}: ${why}` });
}

/** `gap auto (skip), overlap first`: each side as declared, with what an `auto` side resolved to. */
export function summarizeDstPolicy(dst: DstPolicy, resolved: ResolvedDstPolicy): string {
  const side = (declared: string, actual: string): string => (declared === 'auto' ? `auto (${actual})` : actual);
  return `gap ${side(dst.gap, resolved.gap)}, overlap ${side(dst.overlap, resolved.overlap)}`;
}
