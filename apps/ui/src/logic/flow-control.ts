/**
 * A schedule's flow controls in words, for its page: "debounce 30s per account-{{event.data.accountId}},
 * at most 5m", each with a sentence on what it does to the runs events start.
 */
import type { Batch, Debounce, WindowLimit } from '../data/wire/index.js';

export interface FlowControls {
  debounce: Debounce | null;
  throttle: WindowLimit | null;
  rateLimit: WindowLimit | null;
  batch: Batch | null;
}

export interface FlowControlWords {
  control: 'debounce' | 'throttle' | 'rateLimit' | 'batch';
  /** The declaration, short: `debounce 30s per account-{{event.data.accountId}}, at most 5m`. */
  short: string;
  /** What it does to the runs. */
  meaning: string;
}

/** ` per <key>`, or nothing when the control has one key for the whole schedule. */
const perKey = (key: string | null): string => (key === null ? '' : ` per ${key}`);
/** How the key reads inside a sentence. */
const eachKey = (key: string | null): string => (key === null ? 'for the schedule' : `per key ${key}`);
const runs = (n: number): string => (n === 1 ? '1 run' : `${n} runs`);

/** The schedule's declared controls, in the order they act on an event: gathering, then making, then starting. */
export function flowControlsInWords(s: FlowControls): FlowControlWords[] {
  const words: FlowControlWords[] = [];
  if (s.debounce) {
    const d = s.debounce;
    words.push({
      control: 'debounce',
      short: `debounce ${d.period}${perKey(d.key)}${d.maxWait === null ? '' : `, at most ${d.maxWait}`}`,
      meaning: `one run ${eachKey(d.key)} once ${d.period} pass with no new event, carrying the last event${d.maxWait === null ? '' : `; at most ${d.maxWait} after the first event, new events or not`}`,
    });
  }
  if (s.batch) {
    const b = s.batch;
    words.push({
      control: 'batch',
      short: `batch of up to ${b.maxSize}${perKey(b.key)}, or ${b.timeout} after the first`,
      meaning: `events gathered ${eachKey(b.key)} into one run (payload.events, in order) once ${b.maxSize} are in, or ${b.timeout} after the first`,
    });
  }
  if (s.rateLimit) {
    const r = s.rateLimit;
    words.push({
      control: 'rateLimit',
      short: `rate limit ${r.limit} per ${r.period}${perKey(r.key)}`,
      meaning: `at most ${runs(r.limit)} made ${eachKey(r.key)} in any ${r.period}; further events make none (skipped RATE_LIMITED)`,
    });
  }
  if (s.throttle) {
    const t = s.throttle;
    words.push({
      control: 'throttle',
      short: `throttle ${t.limit} per ${t.period}${perKey(t.key)}`,
      meaning: `every event gets its run, but at most ${t.limit === 1 ? '1 run starts' : `${t.limit} runs start`} ${eachKey(t.key)} in any ${t.period}; the others wait queued (THROTTLED), in order`,
    });
  }
  return words;
}

/** One line for the definition: `debounce 30s per account-{{event.data.accountId}}, at most 5m; rate limit 10 per 1m`, or `none`. */
export function flowControlLine(s: FlowControls): string {
  const words = flowControlsInWords(s);
  return words.length === 0 ? 'none: every matching event makes its run' : words.map((w) => w.short).join('; ');
}
