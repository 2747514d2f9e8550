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
  resolveFixedTimePolicy,
  summarizeDstPolicy,
  type DstExplanation,
  type DstGapPolicy,
  type DstOverlapPolicy,
  type DstPolicy,
  type ResolvedDstPolicy,
} from './dst-policy.js';
export { isExclusionMarker, localDayOf, nextFireAfter, nextFireTimes, previousFireBefore, type PlainRecurrence, type Recurrence } from './recurrence.js';
export { MAX_MOVE_DAYS, ON_EXCLUDED, dayOfIsoDate, isoDateOfDay, weekdayOfDay, type DayExclusion, type OnExcluded } from './calendar.js';
export { anchorOf, remoteNow, type ClockAnchor, type ClockSample } from './clock-estimate.js';
