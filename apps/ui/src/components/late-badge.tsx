/** Marks a schedule whose runs are not succeeding within its deadline: "late since" its first late slot, the reason in the tooltip. */
import type { Schedule } from '../data/wire/index.js';
import { lateInWords } from '../logic/deadlines.js';
import { When } from './when.js';

export function LateBadge({ schedule }: { schedule: Pick<Schedule, 'expect' | 'lateSince'> }) {
  if (schedule.lateSince === null) return null;
  const words = lateInWords(schedule.lateSince, schedule.expect);
  return (
    <span class="badge badge-late" title={words} data-testid="late-badge">
      late since <When at={schedule.lateSince} />
      <span class="sr-only"> ({words})</span>
    </span>
  );
}
