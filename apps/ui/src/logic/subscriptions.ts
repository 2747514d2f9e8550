/**
 * Subscriptions as the dashboard shows them: a webhook URL without its secret, the filter in
 * words, what the endpoint answered each attempt, and the picture of the attempts over time on a
 * subscription's page (one bar per attempt where it happened, as tall as it took, in the colour of
 * how it went).
 */
import type { DeliveryAttempt, Subscription, SubscriptionDelivery } from '../data/wire/index.js';
import { formatElapsed } from './run-story.js';
import { instantInWords } from './sensor-evaluations.js';

/**
 * A webhook URL as host and path, for lists and headings. Webhook services put the secret in the
 * path (Slack's /services/T…/B…/<token>, Discord's /api/webhooks/<id>/<token>) or the query, and
 * a screen is seen more widely than what the API answers, so the path ends at the first segment
 * that looks like a token and the query is left out.
 */
export function urlInWords(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return url;
  }
  const segments = parsed.pathname.split('/').slice(1);
  const secret = segments.findIndex(looksSecret);
  if (secret >= 0) return `${parsed.host}${segments.slice(0, secret).map((s) => `/${s}`).join('')}/…`;
  const path = parsed.pathname === '/' ? '' : parsed.pathname;
  return `${parsed.host}${path}${parsed.search === '' ? '' : '?…'}`;
}

/**
 * A path segment that is probably a token rather than a name: long, of token characters only,
 * and mixing letters with digits (a word or a number is not a secret), or simply very long.
 */
function looksSecret(segment: string): boolean {
  const text = safeDecode(segment);
  if (!/^[A-Za-z0-9_\-=.~]+$/.test(text)) return false;
  if (text.length >= 32) return true;
  return text.length >= 16 && /[A-Za-z]/.test(text) && /\d/.test(text);
}

function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/** Which events of the listed types reach the webhook: every one, or only those of the named schedules and labels. */
export function filterInWords(filter: Subscription['filter']): string {
  const parts: string[] = [];
  const { scheduleIds, labels } = filter;
  if (scheduleIds.length > 0) parts.push(scheduleIds.length === 1 ? '1 schedule' : `${scheduleIds.length} schedules`);
  const pairs = Object.entries(labels).map(([k, v]) => `${k}:${v}`);
  if (pairs.length > 0) parts.push(`labels ${pairs.join(', ')}`);
  return parts.length === 0 ? 'every event of its types' : `only ${parts.join(' and ')}`;
}

/** How one attempt went: the endpoint took it (2xx), answered otherwise, or did not answer at all. */
export type AttemptOutcome = 'taken' | 'refused' | 'unanswered';

export function attemptOutcome(attempt: Pick<DeliveryAttempt, 'statusCode' | 'error'>): AttemptOutcome {
  if (attempt.error === null) return 'taken';
  return attempt.statusCode === null ? 'unanswered' : 'refused';
}

/** Each outcome in words, for the legend. */
export const ATTEMPT_OUTCOMES: Record<AttemptOutcome, string> = {
  taken: 'taken (2xx)',
  refused: 'refused (another status)',
  unanswered: 'no answer (network error, timeout, refused address)',
};

/** What the endpoint said to one attempt: "200 in 12 ms", "503 in 40 ms: …", "no answer after 10.0 s: …". */
export function answerInWords(attempt: Pick<DeliveryAttempt, 'statusCode' | 'latencyMs' | 'error'>): string {
  const answer = attempt.statusCode === null ? `no answer after ${formatElapsed(attempt.latencyMs)}` : `${attempt.statusCode} in ${formatElapsed(attempt.latencyMs)}`;
  return attempt.error === null ? answer : `${answer}: ${attempt.error}`;
}

/** A delivery's newest attempt in words, or that none was made yet. */
export function lastAnswerInWords(delivery: Pick<SubscriptionDelivery, 'attempts'>): string {
  const last = delivery.attempts[delivery.attempts.length - 1];
  return last === undefined ? 'not tried yet' : answerInWords(last);
}

/**
 * The attempts picture's geometry, in SVG pixels: the time axis spans `plotWidth`, each bar is
 * `barWidth` wide with at least `gap` between neighbours, and the quickest attempt still stands
 * `minBar` tall.
 */
export const ATTEMPTS_CHART = { plotWidth: 640, plotHeight: 80, minBar: 3, barWidth: 6, gap: 2, top: 16, left: 56, right: 12, bottom: 28 } as const;

export interface AttemptMark {
  /** The delivery and its attempt number, unique on a page of deliveries. */
  key: string;
  deliveryId: string;
  attempt: number;
  outcome: AttemptOutcome;
  /** The left edge of the bar. */
  x: number;
  y: number;
  height: number;
  /** The tooltip: when, which event and attempt, and the answer. */
  words: string;
}

export interface AttemptsChart {
  width: number;
  height: number;
  /** The y of the baseline (no time taken). */
  baseline: number;
  /** The latency the top of the plot stands for, in milliseconds. */
  scaleMaxMs: number;
  marks: AttemptMark[];
  /** The first and last attempt drawn. */
  from: string | null;
  to: string | null;
}

/**
 * Lays out the attempts of `deliveries` (any order) on one time axis, oldest left: each bar where
 * its attempt was made, as tall as it took. Attempts closer in time than a bar's width are set side
 * by side, in their order, so each stays visible; the plot grows to the right for them if need be.
 */
export function attemptsChart(deliveries: readonly SubscriptionDelivery[], box: typeof ATTEMPTS_CHART = ATTEMPTS_CHART): AttemptsChart {
  const attempts = deliveries
    .flatMap((delivery) => delivery.attempts.map((attempt) => ({ delivery, attempt, at: Date.parse(attempt.attemptedAt) })))
    .sort((a, b) => a.at - b.at || Number(a.delivery.id) - Number(b.delivery.id) || a.attempt.attempt - b.attempt.attempt);
  const first = attempts[0];
  const last = attempts[attempts.length - 1];
  const span = first && last ? last.at - first.at : 0;
  const scaleMaxMs = Math.max(1, ...attempts.map((a) => a.attempt.latencyMs));
  const baseline = box.top + box.plotHeight;
  let nextFree = box.left;
  const marks = attempts.map(({ delivery, attempt, at }): AttemptMark => {
    const onAxis = span === 0 ? box.left : box.left + ((at - first!.at) / span) * (box.plotWidth - box.barWidth);
    const x = Math.max(onAxis, nextFree);
    nextFree = x + box.barWidth + box.gap;
    const height = Math.max(box.minBar, (attempt.latencyMs / scaleMaxMs) * box.plotHeight);
    return {
      key: `${delivery.id}-${attempt.attempt}`,
      deliveryId: delivery.id,
      attempt: attempt.attempt,
      outcome: attemptOutcome(attempt),
      x,
      y: baseline - height,
      height,
      words: `${instantInWords(attempt.attemptedAt)} · ${delivery.eventType}, attempt ${attempt.attempt} · ${answerInWords(attempt)}`,
    };
  });
  const plotRight = Math.max(box.left + box.plotWidth, nextFree - box.gap);
  return {
    width: plotRight + box.right,
    height: baseline + box.bottom,
    baseline,
    scaleMaxMs,
    marks,
    from: first?.attempt.attemptedAt ?? null,
    to: last?.attempt.attemptedAt ?? null,
  };
}
