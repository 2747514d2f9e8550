/** Time semantics: durations, IANA zones, cron expressions and recurrences. Pure, no I/O. */
export { DurationError, MAX_DURATION_MS, formatDuration, parseDuration } from './duration.js';
export { instantsForWallTime, isValidTimeZone, shiftGapWallTime, toWallTime, zoneOffsetMinutes, type WallTime } from './zone.js';
export { CronSyntaxError, cronMatches, parseCron, type CronExpression, type CronField } from './cron.js';
export {
  DEFAULT_DST_POLICY,
  DST_GAP_POLICIES,
  DST_OVERLAP_POLICIES,
  explainDstPolicy,
  resolveDstPolicy,
  summarizeDstPolicy,
  type DstExplanation,
  type DstGapPolicy,
  type DstOverlapPolicy,
  type DstPolicy,
  type ResolvedDstPolicy,
} from './dst-policy.js';
export { nextFireAfter, nextFireTimes, previousFireBefore, type Recurrence } from './recurrence.js';
export { anchorOf, remoteNow, type ClockAnchor, type ClockSample } from './clock-estimate.js';
