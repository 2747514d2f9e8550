/**
 * The dashboard's calendars in a real headless Chromium, against the API alone: a calendar made
 * through REST (the public holidays of Bavaria and one date of its own) is listed with where its
 * holidays come from, its own dates and the schedules excluding it; its page draws the next twelve
 * months as month grids, each excluded date marked and named on its tooltip (New Year's Day and
 * Epiphany filled, the own date hatched), and lists the same dates; a schedule's page tells its
 * calendar rule in words, links the calendar, and marks among its next fires the dates the calendar
 * keeps clear, each with why. Each page is saved as a screenshot under test-results/ui/.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromium, type Browser, type Page } from 'playwright-core';
import { build } from 'vite';
import { useKairos } from '../support/kairos.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SCREENSHOTS = `${ROOT}test-results/ui`;
const CHROMIUM_FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'];

/** The page's today, pinned (page.clock) so the twelve months it draws are known: November 2026 to October 2027. */
const TODAY = '2026-11-16';

describe('calendars in the dashboard', () => {
  let browser: Browser;
  let page: Page;

  const shot = (name: string) => page.screenshot({ path: `${SCREENSHOTS}/${name}.png`, fullPage: true });

  beforeAll(async () => {
    if (!existsSync(`${ROOT}dist/ui/index.html`)) await build({ configFile: `${ROOT}apps/ui/vite.config.ts`, logLevel: 'warn' });
    mkdirSync(SCREENSHOTS, { recursive: true });
  }, 120_000);

  const { t, kairos, client } = useKairos({ roles: ['api'] });

  beforeAll(async () => {
    // A live worker of the echo handler, so schedules may name it.
    await t.db.query(`INSERT INTO workers (id, queue, handlers, version, started_at, last_seen_at) VALUES ('host:1:default', 'default', '{echo}', '1.0.0', now(), now())`);
    browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: CHROMIUM_FLAGS });
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await page.clock.setFixedTime(new Date(`${TODAY}T10:00:00Z`));
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
  });

  /** Christmas Eve is no public holiday in Bavaria: the office's own closing day. */
  const ownDate = '2026-12-24';
  const ids: Record<string, string> = {};

  it('lists a calendar with its holidays, its own dates and the schedules excluding it', async () => {
    const calendar = await client.post('/v1/calendars', {
      name: 'bavaria',
      holidays: { country: 'DE', state: 'BY' },
      dates: [ownDate],
      description: 'Munich office: public holidays and its own closing day',
    });
    expect(calendar.status, JSON.stringify(calendar.body)).toBe(201);
    const target = { type: 'handler', name: 'echo' };
    const schedules = {
      payroll: { cron: '0 9 * * *', calendar: { exclude: ['bavaria'], weekdaysOnly: true, onExcluded: 'previous' } },
      // The 1st and the 6th of each month: some fall on weekends, and New Year's Day and Epiphany are holidays.
      'month-report': { cron: '0 9 1,6 * *', calendar: { exclude: ['bavaria'], weekdaysOnly: true } },
    };
    for (const [name, definition] of Object.entries(schedules)) {
      const created = await client.post('/v1/schedules', { name, timezone: 'Europe/Berlin', target, ...definition });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      ids[name] = created.body.id as string;
    }

    await page.goto(`${kairos.url}/ui`);
    await page.getByRole('link', { name: 'Calendars' }).click();
    const row = page.getByTestId('calendar-row-bavaria');
    await row.waitFor();
    expect(new URL(page.url()).pathname).toBe('/ui/calendars');
    const cells = (await row.locator('td').allTextContents()).map((c) => c.trim());
    expect(cells.slice(0, 4)).toEqual(['bavariaMunich office: public holidays and its own closing day', 'DE-BY public holidays', '1', '2 schedules']);
    await shot('calendars');
  });

  it("draws the calendar's next twelve months with each excluded date marked and named, and lists them", async () => {
    await page.getByTestId('calendar-row-bavaria').getByRole('link', { name: 'bavaria' }).click();
    await page.getByRole('heading', { name: 'bavaria' }).waitFor();
    expect(new URL(page.url()).pathname).toBe('/ui/calendars/bavaria');
    expect(await page.locator('.lead').textContent()).toBe('Munich office: public holidays and its own closing day · DE-BY public holidays and 1 own date · excluded by 2 schedules');
    const strip = page.getByTestId('year-strip');
    await strip.waitFor();
    const months = strip.locator('svg[data-testid^="month-"]');
    expect(await months.count()).toBe(12);
    expect(await months.evaluateAll((svgs) => [svgs[0]!.getAttribute('data-testid'), svgs[11]!.getAttribute('data-testid')])).toEqual(['month-2026-11', 'month-2027-10']);

    const day = (date: string) => strip.locator(`[data-date="${date}"]`);
    expect(await day('2027-01-01').getAttribute('data-excluded')).toBe('holiday');
    expect(await day('2027-01-01').locator('title').textContent()).toBe("Friday 1 January 2027: New Year's Day");
    expect(await day('2027-01-06').getAttribute('data-excluded')).toBe('holiday');
    expect(await day('2027-01-06').locator('title').textContent()).toBe('Wednesday 6 January 2027: Epiphany');
    expect(await day(ownDate).getAttribute('data-excluded')).toBe('own');
    expect(await day(ownDate).locator('title').textContent()).toBe("Thursday 24 December 2026: one of the calendar's own dates");
    // An ordinary working day is drawn unmarked; the days before today are drawn faint, and today outlined.
    expect(await day('2027-01-07').getAttribute('data-excluded')).toBeNull();
    expect(await day('2026-11-01').getAttribute('class')).toContain('day-before');
    expect(await day(TODAY).getAttribute('class')).toContain('day-today');

    // The list tells the same dates as the grids, with the holidays' names.
    const marked = await strip.locator('[data-excluded]').evaluateAll((cells) => cells.map((c) => c.getAttribute('data-date')));
    const table = page.getByTestId('calendar-dates');
    const listed = await table.locator('tbody tr').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-date')));
    expect(listed).toEqual(marked);
    // The own date and Bavaria's eleven public holidays from Christmas 2026 to German Unity Day 2027 (All Saints' Day, 1 November, falls outside in both years).
    expect(listed).toEqual([
      '2026-12-24', '2026-12-25', '2026-12-26', '2027-01-01', '2027-01-06', '2027-03-26', '2027-03-29', '2027-05-01', '2027-05-06', '2027-05-17', '2027-05-27', '2027-10-03',
    ]);
    expect(await table.locator('tr[data-date="2027-01-06"]').textContent()).toContain('Epiphany');
    expect(await table.locator(`tr[data-date="${ownDate}"]`).textContent()).toContain('one of its own dates');
    await shot('calendar');
  });

  it("tells a schedule's calendar rule in words, links the calendar, and marks the dates it keeps clear among the next fires", async () => {
    await page.goto(`${kairos.url}/ui/schedules/${ids.payroll}`);
    await page.getByRole('heading', { name: 'payroll' }).waitFor();
    const rule = page.getByTestId('calendar-rule');
    expect(await rule.textContent()).toBe('Excludes bavaria, weekends; slots on excluded dates move to the previous allowed date');

    await page.goto(`${kairos.url}/ui/schedules/${ids['month-report']}`);
    await page.getByRole('heading', { name: 'month-report' }).waitFor();
    expect(await rule.textContent()).toBe('Excludes bavaria, weekends; nothing fires on excluded dates');
    const { excludedDates } = (await client.get(`/v1/schedules/${ids['month-report']}/preview?count=10`)).body as { excludedDates: string[] };
    expect(excludedDates.length).toBeGreaterThan(0);
    const fires = page.locator('ol.fires');
    await fires.waitFor();
    expect(await fires.locator('li:not([data-excluded-date])').count()).toBe(10);
    const marked = fires.locator('li[data-excluded-date]');
    expect(await marked.evaluateAll((items) => items.map((li) => li.getAttribute('data-excluded-date')))).toEqual(excludedDates);
    // Each says why: the holiday of the calendar that lists it, or the weekend.
    const sorted = [...excludedDates].sort();
    const holidays = (await client.get(`/v1/calendars/bavaria/dates?from=${sorted[0]}&to=${sorted[sorted.length - 1]}`)).body.items as { date: string; holiday: string | null }[];
    for (const date of excludedDates) {
      const text = await fires.locator(`li[data-excluded-date="${date}"]`).textContent();
      const holiday = holidays.find((h) => h.date === date)?.holiday;
      const weekend = [0, 6].includes(new Date(`${date}T00:00:00Z`).getUTCDay());
      expect(text, date).toContain(`✕ ${date}`);
      if (holiday) expect(text, date).toContain(`${holiday} (bavaria)`);
      if (holiday === null) expect(text, date).toContain('an own date of bavaria');
      if (weekend) expect(text, date).toContain('weekend');
      expect(holiday !== undefined || weekend, date).toBe(true);
    }
    // A marked date sits between the fires before and after it.
    const entries = await fires.locator('li').evaluateAll((items) => items.map((li) => li.getAttribute('data-excluded-date') ?? li.querySelector('time')!.getAttribute('datetime')!.slice(0, 10)));
    expect(entries).toEqual([...entries].sort());
    await shot('schedule-calendar');

    await rule.getByRole('link', { name: 'bavaria' }).click();
    await page.getByRole('heading', { name: 'bavaria' }).waitFor();
    expect(new URL(page.url()).pathname).toBe('/ui/calendars/bavaria');
    expect(await page.getByRole('link', { name: 'Calendars' }).getAttribute('aria-current')).toBe('page');
  });
});
