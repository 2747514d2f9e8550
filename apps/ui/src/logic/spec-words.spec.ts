import { describe, expect, it } from 'vitest';
import { durationInWords, specInWords, type TimingSpec } from './spec-words.js';

const cron = (expr: string, timezone = 'UTC'): TimingSpec => ({ cron: expr, every: null, at: null, timezone });
const every = (value: string): TimingSpec => ({ cron: null, every: value, at: null, timezone: 'UTC' });

describe('specInWords', () => {
  it.each<[TimingSpec, string]>([
    [cron('0 9 * * *', 'Europe/Berlin'), 'every day at 09:00 Europe/Berlin'],
    [cron('30 2 * * *', 'UTC'), 'every day at 02:30 UTC'],
    [cron('5 7 * * 1-5', 'America/New_York'), 'every weekday at 07:05 America/New_York'],
    [cron('0 10 * * 1'), 'every Monday at 10:00 UTC'],
    [cron('0 10 * * 7'), 'every Sunday at 10:00 UTC'],
    [cron('0 10 * * 1,3,5'), 'every Monday, Wednesday and Friday at 10:00 UTC'],
    [cron('0 10 * * 0,6'), 'every Saturday and Sunday at 10:00 UTC'],
    [cron('0 0 1 * *'), 'on day 1 of every month at 00:00 UTC'],
    [cron('0 12 25 12 *'), 'every December 25 at 12:00 UTC'],
    [cron('* * * * *'), 'every minute'],
    [cron('*/15 * * * *'), 'every 15 minutes'],
    [cron('7 * * * *'), 'every hour at minute 7'],
    [cron('0 */6 * * *', 'Asia/Tokyo'), 'every 6 hours at minute 0 (Asia/Tokyo)'],
    [cron('0 9-17 * * *'), 'cron "0 9-17 * * *" (UTC)'],
    [cron('0 9 * * MON'), 'cron "0 9 * * MON" (UTC)'],
    [cron('0 9 1 * 1'), 'cron "0 9 1 * 1" (UTC)'],
    [cron('0 0 9 * * *'), 'cron "0 0 9 * * *" (UTC)'],
    [every('15m'), 'every 15 minutes'],
    [every('1m'), 'every minute'],
    [every('1s'), 'every second'],
    [every('1h30m'), 'every 1 hour 30 minutes'],
    [every('2d'), 'every 2 days'],
    [{ cron: null, every: null, at: '2026-12-01T09:00:00Z', timezone: 'UTC' }, 'once at 2026-12-01 09:00:00 UTC'],
    [{ cron: null, every: null, at: '2026-12-01T09:00:00.000Z', timezone: 'UTC' }, 'once at 2026-12-01 09:00:00 UTC'],
    [{ cron: null, every: null, at: null, timezone: 'UTC' }, 'no timing'],
    [{ cron: null, every: null, at: null, on: { event: 'order.paid', match: { 'data.plan': 'pro' } }, timezone: 'UTC' }, 'runs on each event order.paid where data.plan = "pro"'],
    [{ cron: null, every: null, at: null, on: { event: 'user.signed_up', match: {} }, timezone: 'UTC' }, 'runs on each event user.signed_up'],
    [{ cron: null, every: null, at: null, on: null, timezone: 'UTC' }, 'no timing'],
  ])('%j → %s', (spec, words) => {
    expect(specInWords(spec)).toBe(words);
  });
});

describe('durationInWords', () => {
  it.each([
    ['500ms', '500 milliseconds'],
    ['1h', 'hour'],
    ['1h1m1s', '1 hour 1 minute 1 second'],
    ['90', '90'],
    ['15x', '15x'],
  ])('%s → %s', (duration, words) => {
    expect(durationInWords(duration)).toBe(words);
  });
});
