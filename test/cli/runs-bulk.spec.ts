/**
 * `kairos runs cancel|retry` against a Kairos started in this process: a dry run prints the count
 * and a sample; --yes acts; without a terminal and without --yes it refuses and changes nothing;
 * on a terminal it asks first. The schedule is named, --since is a duration back from now.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../apps/cli/src/cli.js';
import type { Prompt } from '../../apps/cli/src/commands/runs-bulk.js';
import { useKairos } from '../support/kairos.js';

const held = { type: 'handler', name: 'hold', queue: 'cli-held' };
const noTerminal: Prompt = { isTTY: false, confirm: () => Promise.reject(new Error('no terminal to ask on')) };

describe('kairos runs cancel|retry', () => {
  const { t, kairos, client } = useKairos({ roles: ['api'] });
  const ids: string[] = [];

  beforeAll(async () => {
    // A worker of cli-held was seen (so its targets are accepted); none serves the queue.
    await t.db.query(`INSERT INTO workers (id, queue, handlers, version, started_at, last_seen_at) VALUES ('host:7:cli', 'cli-held', '{hold}', '1.0.0', now(), now())`);
    const availableAt = new Date(Date.now() + 3_600_000).toISOString();
    const { body } = await client.post('/v1/runs/batch', { items: [1, 2, 3].map((n) => ({ target: held, payload: { n }, availableAt })) });
    ids.push(...body.items.map((item: any) => item.id).sort());
  });

  const cli = async (argv: string[], prompt: Prompt = noTerminal): Promise<{ code: number; text: string }> => {
    const lines: string[] = [];
    const code = await runCli(argv, { line: (l) => lines.push(l) }, { KAIROS_URL: kairos.url }, prompt);
    return { code, text: lines.join('\n') };
  };
  const states = async () => (await t.db.query(`SELECT state FROM runs WHERE id = ANY($1::uuid[])`, [ids])).rows.map((r: any) => r.state);

  it('prints the count and a sample on a dry run, refuses to act without a terminal and without --yes, and acts with --yes', async () => {
    expect(await cli(['runs', 'cancel', '--queue', 'cli-held', '--state', 'queued,sleeping', '--since', '1h', '--dry-run'])).toEqual({
      code: 0,
      text: ['would cancel 3 runs:', ...ids.map((id) => `  ${id}`)].join('\n'),
    });
    expect(await states()).toEqual(['queued', 'queued', 'queued']);

    const refused = await cli(['runs', 'cancel', '--queue', 'cli-held']);
    expect(refused.code).toBe(2);
    expect(refused.text).toContain('would cancel 3 runs:');
    expect(refused.text).toContain('refusing to cancel 3 runs without confirmation (stdin is not a terminal); pass --yes to cancel them');
    expect(await states()).toEqual(['queued', 'queued', 'queued']);

    // On a terminal it asks; no is no.
    const asked: string[] = [];
    const declined = await cli(['runs', 'cancel', '--queue', 'cli-held'], { isTTY: true, confirm: async (q) => (asked.push(q), false) });
    expect(declined).toMatchObject({ code: 1 });
    expect(declined.text).toContain('nothing cancelled');
    expect(asked).toEqual(['Cancel 3 runs? [y/N] ']);
    expect(await states()).toEqual(['queued', 'queued', 'queued']);

    expect(await cli(['runs', 'cancel', '--queue', 'cli-held', '--yes'])).toEqual({
      code: 0,
      text: ['would cancel 3 runs:', ...ids.map((id) => `  ${id}`), 'cancelled 3 of 3 runs matched', ...ids.map((id) => `  ${id}`)].join('\n'),
    });
    expect(await states()).toEqual(['cancelled', 'cancelled', 'cancelled']);

    // Cancelled runs are ones /retry takes again (a dry run names them); none is dead; nothing is left to cancel.
    expect(await cli(['runs', 'retry', '--queue', 'cli-held', '--dry-run'])).toEqual({ code: 0, text: ['would retry 3 runs:', ...ids.map((id) => `  ${id}`)].join('\n') });
    expect(await cli(['runs', 'retry', '--queue', 'cli-held', '--state', 'dead', '--yes'])).toEqual({ code: 0, text: 'no failed, dead or cancelled run matches: nothing to retry' });
    expect(await cli(['runs', 'cancel', '--queue', 'cli-held', '--json', '--yes'])).toEqual({ code: 0, text: JSON.stringify({ matched: 0, acted: 0, sample: [] }, null, 2) });
  });

  it('finds the schedule by name, and words its refusals', async () => {
    const schedule = await client.post('/v1/schedules', { name: 'cli-bulk-nightly', cron: '0 3 * * *', target: { type: 'handler', name: 'echo' } });
    expect(schedule.status).toBe(201);
    expect(await cli(['runs', 'cancel', '--schedule', 'cli-bulk-nightly', '--dry-run'])).toEqual({ code: 0, text: 'no active run matches: nothing to cancel' });
    expect(await cli(['runs', 'cancel', '--schedule', 'no-such-schedule'])).toEqual({ code: 1, text: 'kairos runs cancel: no schedule is named "no-such-schedule"' });
    expect(await cli(['runs', 'retry'])).toEqual({ code: 2, text: 'kairos runs retry needs a filter: at least one of --schedule, --state, --reason, --queue, --since' });
    const unknownState = await cli(['runs', 'cancel', '--state', 'finished', '--yes']);
    expect(unknownState.code).toBe(1);
    expect(unknownState.text).toMatch(/^kairos runs cancel: filter\.state\[0\] must be one of "queued"/);
    expect((await cli(['runs', 'cancel', '--since', 'last tuesday'])).text).toContain('--since must be an instant');
    expect((await cli(['runs', 'cancel', '--reason', 'BORED'])).text).toMatch(/^kairos runs cancel: filter\.reasonCode/);
    expect(await states()).toEqual(['cancelled', 'cancelled', 'cancelled']);
  });
});
