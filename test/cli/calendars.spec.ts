/**
 * `kairos calendars` against a Kairos started in this process: put from flags and from YAML and
 * JSON files, list, get with the dates excluded in the next twelve months, delete (refused while a
 * schedule names the calendar), and the refusals it words itself.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../../apps/cli/src/cli.js';
import { useKairos } from '../support/kairos.js';

describe('kairos calendars', () => {
  const { kairos, client } = useKairos({ roles: ['api'] });

  const cli = async (...argv: string[]): Promise<{ code: number; text: string }> => {
    const lines: string[] = [];
    const code = await runCli(argv, { line: (l) => lines.push(l) }, { KAIROS_URL: kairos.url });
    return { code, text: lines.join('\n') };
  };

  it('puts calendars from flags and files, lists them, shows one with its dates, and deletes them through the API', async () => {
    expect(await cli('calendars', 'put', 'bavaria', '--dates', '2030-12-31,2030-12-24', '--country', 'DE', '--state', 'BY', '--description', 'Munich office')).toEqual({
      code: 0,
      text: 'created calendar bavaria: 2 dates, holidays DE-BY',
    });
    expect((await cli('calendars', 'put', 'bavaria', '--dates', '2030-12-24,2030-12-31', '--country', 'DE', '--state', 'BY', '--description', 'Munich office')).text).toBe(
      'calendar bavaria holds 2 dates, holidays DE-BY, named by 0 schedules',
    );
    const dir = await mkdtemp(join(tmpdir(), 'kairos-calendars-'));
    await writeFile(join(dir, 'freeze.yaml'), ['dates:', '  - "2030-12-21"', '  - "2030-12-22"', 'description: release freeze', ''].join('\n'));
    expect((await cli('calendars', 'put', 'freeze', '--file', join(dir, 'freeze.yaml'))).text).toBe('created calendar freeze: 2 dates');
    await writeFile(join(dir, 'us.json'), JSON.stringify({ name: 'us', holidays: { country: 'US', state: 'NY' } }));
    expect((await cli('calendars', 'put', 'us', '-f', join(dir, 'us.json'), '--json')).text).toContain('"country": "US"');

    const listed = await cli('calendars');
    expect(listed.code).toBe(0);
    expect(listed.text).toMatch(/^name\s+dates\s+holidays\s+schedules\s+description$/m);
    expect(listed.text).toMatch(/^bavaria\s+2\s+DE-BY\s+0\s+Munich office$/m);
    expect(listed.text).toMatch(/^freeze\s+2\s+-\s+0\s+release freeze$/m);
    expect(listed.text).toMatch(/^us\s+0\s+US-NY\s+0\s+-$/m);
    expect(JSON.parse((await cli('calendars', 'list', '--limit', '2', '--output', 'json')).text).map((c: { name: string }) => c.name)).toEqual(['bavaria', 'freeze']);

    // The dates of the next twelve months, as GET /v1/calendars/:name/dates answers by default.
    const dates = (await client.get('/v1/calendars/bavaria/dates')).body as { from: string; to: string; items: { date: string; holiday: string | null }[] };
    expect(dates.items.length).toBeGreaterThan(10);
    const shown = await cli('calendars', 'get', 'bavaria');
    expect(shown.code).toBe(0);
    expect(shown.text).toContain('calendar bavaria: named by 0 schedules\n  description: Munich office\n  holidays: DE-BY\n  dates: 2030-12-24, 2030-12-31\n');
    expect(shown.text).toContain(`excludes ${dates.items.length} dates from ${dates.from} to ${dates.to}:\ndate`);
    for (const d of dates.items) expect(shown.text).toMatch(new RegExp(`^${d.date}\\s+${d.holiday === null ? '-' : '\\S'}`, 'm'));
    expect(JSON.parse((await cli('calendars', 'get', 'bavaria', '--json')).text)).toEqual({ calendar: (await client.get('/v1/calendars/bavaria')).body, dates });
    expect((await cli('calendars', 'get', 'freeze')).text).toMatch(/excludes 0 dates from \S+ to \S+$/);

    // A calendar a schedule names stays until the schedule no longer does.
    const schedule = await client.post('/v1/schedules', { name: 'munich', cron: '0 9 * * *', timezone: 'Europe/Berlin', target: { type: 'handler', name: 'echo' }, calendar: { exclude: ['bavaria'] } });
    expect(schedule.status).toBe(201);
    expect((await cli('calendars', 'get', 'bavaria')).text).toMatch(/^calendar bavaria: named by 1 schedule$/m);
    await expect(cli('calendars', 'delete', 'bavaria')).rejects.toThrow(/excluded by schedule "munich"/);
    expect((await client.delete(`/v1/schedules/${schedule.body.id}`)).status).toBe(204);
    expect(await cli('calendars', 'delete', 'bavaria')).toEqual({ code: 0, text: 'deleted calendar bavaria' });
    expect(JSON.parse((await cli('calendars', 'delete', 'freeze', '--output', 'json')).text)).toEqual({ name: 'freeze', deleted: true });
    expect((await cli('calendars')).text).toMatch(/^name\s+dates\s+holidays\s+schedules\s+description\nus\s/);
  });

  it('words its own refusals and passes on the API\'s', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'kairos-calendars-'));
    await writeFile(join(dir, 'bad.yaml'), 'dates: [unclosed');
    await expect(cli('calendars', 'put', 'x')).rejects.toThrow(/needs --file, or --dates, --country or both/);
    await expect(cli('calendars', 'put', 'x', '--file', join(dir, 'bad.yaml'), '--dates', '2030-01-01')).rejects.toThrow(/--file or the flags/);
    await expect(cli('calendars', 'put', 'x', '--file', join(dir, 'bad.yaml'))).rejects.toThrow(/bad\.yaml: not valid YAML/);
    await expect(cli('calendars', 'put', 'x', '--file', join(dir, 'missing.json'))).rejects.toThrow(/missing\.json: no such file/);
    await expect(cli('calendars', 'put', 'x', '--dates', '2030-01-01', '--state', 'BY')).rejects.toThrow(/--state and --region need --country/);
    await expect(cli('calendars', 'put', 'x', '--dates', '2030-02-30')).rejects.toThrow(/real date written YYYY-MM-DD/);
    await expect(cli('calendars', 'put', 'x', '--country', 'XX')).rejects.toThrow(/XX/);
    await expect(cli('calendars', 'get', 'nowhere')).rejects.toThrow(/nowhere/);
    await expect(cli('calendars', 'delete')).rejects.toThrow(/needs a calendar name/);
    await expect(cli('calendars', 'poke', 'x')).rejects.toThrow(/use: kairos calendars/);
    expect((await client.get('/v1/calendars/x')).status).toBe(404);
    expect((await cli('--help')).text).toContain('calendars put <name> --file FILE');
  });
});
