/**
 * Cross-check against cron-parser v5 in UTC, where it is trustworthy (it has DST bugs elsewhere;
 * the DST tables in dst-transitions.spec.ts cover zones). Left out, because cron-parser's
 * semantics differ on purpose or by documented limitation, not because the answers disagree:
 * - a day-of-month starting with `*` but stepped (`*\/2`) alongside a restricted day-of-week:
 *   Vixie (crontab(5): "restricted" means "does not start with *") ANDs the two fields, cron-parser ORs them;
 * - open-ended day-of-week steps (`1/2`): cron-parser runs them through 7 and so adds Sunday;
 * - `L-n`, `#` in a list, and `@midnight`, which cron-parser does not accept;
 * - a day-of-month no month has (`0 0 30 2 *`), which cron-parser rejects and we answer with null.
 */
import { CronExpressionParser } from 'cron-parser';
import { describe, expect, it } from 'vitest';
import { parseCron } from './cron.js';
import { DEFAULT_DST_POLICY } from './dst-policy.js';
import { nextFireTimes } from './recurrence.js';

const EXPRESSIONS = [
  '* * * * *',
  '*/5 * * * *',
  '0 * * * *',
  '15,45 * * * *',
  '5-10 * * * *',
  '0 */2 * * *',
  '23 0-20/2 * * *',
  '30 9 * * 1-5',
  '0 9-17 * * MON-FRI',
  '0 0 * * 0',
  '0 0 * * 7',
  '0 0 * * sun',
  '0 0 * * Tue,THU',
  '0 22 * * 6,0',
  '0 6 * * */2',
  '45 23 * * 5',
  '0 0 1 * *',
  '0 0 1 1 *',
  '59 23 31 12 *',
  '0 12 15 * *',
  '7 7 7 7 *',
  '0 0 29 2 *',
  '0 0 31 * *',
  '0 0 30 * *',
  '0 0 28-31 * *',
  '0 4 8-14 * *',
  '0 0 */7 * *',
  '0 0 1/10 * *',
  '0 0 10-20/5 * *',
  '0 0 * JAN,JUL *',
  '0 0 1 */3 *',
  '0 0 1 feb-apr *',
  '0 0,12 1 */2 *',
  '0 8 * 6-8 1-5',
  '0 0 L * *',
  '0 0 1,L * *',
  '0 0 * * 5L',
  '0 0 * * 6L',
  '0 0 * * FRI#3',
  '0 0 * * 1#1',
  '0 0 * * 0#5',
  '0 0 13 * FRI',
  '0 0 1,15 * 1',
  '0 0 L * 1',
  '0 0 ? * MON',
  '0 0 1 * ?',
  '*/10 * * * * *',
  '30 0 0 * * *',
  '0 0 0 1 1 *',
  '15 30 10 * * MON',
  '*/15 */20 * * * *',
  '@hourly',
  '@daily',
  '@weekly',
  '@monthly',
  '@yearly',
];

const STARTS = ['2026-01-01T00:00:00.000Z', '2026-02-27T13:47:31.250Z', '2027-12-31T23:59:59.000Z', '2028-02-28T12:00:00.000Z'];

function cronParserNext(expr: string, startIso: string, count: number): string[] {
  const iterator = CronExpressionParser.parse(expr, { currentDate: new Date(startIso), tz: 'UTC' });
  return Array.from({ length: count }, () => iterator.next().toDate().toISOString());
}

describe('UTC fire times agree with cron-parser', () => {
  it.each(EXPRESSIONS.flatMap((expr) => STARTS.map((start) => ({ expr, start }))))('$expr after $start', ({ expr, start }) => {
    const fires = nextFireTimes({ kind: 'cron', cron: parseCron(expr), timezone: 'UTC', dst: DEFAULT_DST_POLICY }, Date.parse(start), 6);
    expect(fires.map((ms) => new Date(ms).toISOString())).toEqual(cronParserNext(expr, start, 6));
  });
});
