import { describe, expect, it } from 'vitest';
import type { DeliveryAttempt, Subscription, SubscriptionDelivery } from '../data/wire/index.js';
import { answerInWords, ATTEMPTS_CHART, attemptOutcome, attemptsChart, filterInWords, lastAnswerInWords, urlInWords, type AttemptOutcome } from './subscriptions.js';

const attempt = (n: number, fields: Partial<DeliveryAttempt> = {}): DeliveryAttempt => ({
  attempt: n,
  attemptedAt: '2026-05-01T10:00:00Z',
  statusCode: 200,
  latencyMs: 20,
  error: null,
  ...fields,
});

const delivery = (id: string, attempts: DeliveryAttempt[], fields: Partial<SubscriptionDelivery> = {}): SubscriptionDelivery => ({
  id,
  eventId: `event-${id}`,
  eventType: 'run.dead',
  state: 'delivered',
  attempts,
  nextAttemptAt: null,
  body: {},
  createdAt: '2026-05-01T10:00:00Z',
  finishedAt: '2026-05-01T10:00:00.020Z',
  ...fields,
});

describe('urlInWords', () => {
  it.each<[string, string]>([
    ['https://hooks.example.com/kairos', 'hooks.example.com/kairos'],
    ['https://hooks.example.com/', 'hooks.example.com'],
    ['http://127.0.0.1:8080/hook', '127.0.0.1:8080/hook'],
    ['https://hooks.example.com/v1/incoming/', 'hooks.example.com/v1/incoming/'],
    // Slack: the ids stay (short), the token goes.
    ['https://hooks.slack.com/services/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', 'hooks.slack.com/services/T0AB12CD3/B0EF45GH6/…'],
    // Discord: a number is no secret; the token and everything after it go.
    ['https://discord.com/api/webhooks/123456789012345678/Xy9-abc_DEF123ghi456JKL789mno012PQR345stu678VWX901yz/slack', 'discord.com/api/webhooks/123456789012345678/…'],
    // A long word is no secret, a very long one is.
    ['https://example.com/notifications-for-operations/hook', 'example.com/notifications-for-operations/hook'],
    ['https://example.com/hooks/abcdefghijklmnopqrstuvwxyzabcdefgh', 'example.com/hooks/…'],
    ['https://example.com/0190e1a0-7b2c-7000-8000-00000000abcd', 'example.com/…'],
    // The query may carry the token: it is left out.
    ['https://example.com/hook?token=s3cr3t', 'example.com/hook?…'],
    ['not a url', 'not a url'],
  ])('%s', (url, words) => {
    expect(urlInWords(url)).toBe(words);
  });
});

describe('filterInWords', () => {
  it.each<[Subscription['filter'], string]>([
    [{ scheduleIds: [], labels: {} }, 'every event of its types'],
    [{ scheduleIds: ['a'], labels: {} }, 'only 1 schedule'],
    [{ scheduleIds: ['a', 'b'], labels: { team: 'billing' } }, 'only 2 schedules and labels team:billing'],
    [{ scheduleIds: [], labels: { team: 'billing', env: 'prod' } }, 'only labels team:billing, env:prod'],
  ])('%j', (filter, words) => {
    expect(filterInWords(filter)).toBe(words);
  });
});

describe('attempts in words', () => {
  it.each<[Partial<DeliveryAttempt>, AttemptOutcome, string]>([
    [{}, 'taken', '200 in 20 ms'],
    [{ statusCode: 204, latencyMs: 1_500 }, 'taken', '204 in 1.5 s'],
    [{ statusCode: 503, latencyMs: 40, error: 'HTTP 503' }, 'refused', '503 in 40 ms: HTTP 503'],
    [{ statusCode: null, latencyMs: 10_000, error: 'timed out after 10s' }, 'unanswered', 'no answer after 10.0 s: timed out after 10s'],
    [{ statusCode: null, latencyMs: 0, error: 'address 10.0.0.1 is not allowed' }, 'unanswered', 'no answer after 0 ms: address 10.0.0.1 is not allowed'],
  ])('%j', (fields, outcome, words) => {
    expect(attemptOutcome(attempt(1, fields))).toBe(outcome);
    expect(answerInWords(attempt(1, fields))).toBe(words);
  });

  it('tells the newest attempt of a delivery, or that there was none', () => {
    expect(lastAnswerInWords(delivery('1', [attempt(1, { statusCode: 500, error: 'HTTP 500' }), attempt(2)]))).toBe('200 in 20 ms');
    expect(lastAnswerInWords(delivery('1', [], { state: 'pending' }))).toBe('not tried yet');
  });
});

describe('attemptsChart', () => {
  const { barWidth, gap, left, minBar, plotHeight, plotWidth, right, top } = ATTEMPTS_CHART;
  const at = (seconds: number) => new Date(Date.parse('2026-05-01T10:00:00Z') + seconds * 1_000).toISOString();

  it('draws one mark per attempt of every delivery, oldest left, where it happened, from deliveries listed newest first', () => {
    const chart = attemptsChart([
      delivery('2', [attempt(1, { attemptedAt: at(100), latencyMs: 10 })], { eventType: 'ping' }),
      delivery('1', [attempt(1, { attemptedAt: at(0), statusCode: 503, error: 'HTTP 503', latencyMs: 40 }), attempt(2, { attemptedAt: at(50), statusCode: null, error: 'timed out', latencyMs: 80 })]),
    ]);
    expect(chart.marks.map((m) => [m.key, m.outcome])).toEqual([
      ['1-1', 'refused'],
      ['1-2', 'unanswered'],
      ['2-1', 'taken'],
    ]);
    const axis = plotWidth - barWidth;
    expect(chart.marks.map((m) => m.x)).toEqual([left, left + axis / 2, left + axis]);
    expect(chart.width).toBe(left + plotWidth + right);
    expect(chart.from).toBe(at(0));
    expect(chart.to).toBe(at(100));
    expect(chart.marks[2]!.words).toBe('2026-05-01 10:01:40Z · ping, attempt 1 · 200 in 10 ms');
  });

  it('scales bars to the slowest attempt, the quickest still showing', () => {
    const chart = attemptsChart([delivery('1', [attempt(1, { attemptedAt: at(0), latencyMs: 400 }), attempt(2, { attemptedAt: at(1), latencyMs: 100 }), attempt(3, { attemptedAt: at(2), latencyMs: 0 })])]);
    expect(chart.scaleMaxMs).toBe(400);
    expect(chart.baseline).toBe(top + plotHeight);
    expect(chart.marks.map((m) => m.height)).toEqual([plotHeight, plotHeight / 4, minBar]);
    expect(chart.marks.map((m) => m.y + m.height)).toEqual([chart.baseline, chart.baseline, chart.baseline]);
  });

  it('sets attempts made at once side by side, in the order of their deliveries, widening the plot when they reach its end', () => {
    const burst = Array.from({ length: 100 }, (_, i) => delivery(String(i + 1), [attempt(1, { attemptedAt: at(0) })]));
    const chart = attemptsChart(burst.reverse());
    expect(chart.marks.map((m) => m.deliveryId)).toEqual(Array.from({ length: 100 }, (_, i) => String(i + 1)));
    expect(chart.marks.map((m) => m.x)).toEqual(Array.from({ length: 100 }, (_, i) => left + i * (barWidth + gap)));
    expect(chart.width).toBe(left + 100 * (barWidth + gap) - gap + right);
  });

  it('has a scale and a width with no attempt at all', () => {
    const chart = attemptsChart([delivery('1', [], { state: 'pending' })]);
    expect(chart.marks).toEqual([]);
    expect(chart.scaleMaxMs).toBe(1);
    expect(chart.width).toBe(left + plotWidth + right);
    expect(chart.from).toBeNull();
  });
});
