/**
 * `kairos events` against a Kairos started in this process: send with JSON data and an id (then
 * the same id again, deduped), a send that starts a schedule's run and one its `on` does not match,
 * list (newest first, by name), get, the JSON output, and the refusals it words itself or passes on.
 */
import { describe, expect, it } from 'vitest';
import { runCli } from '../../apps/cli/src/cli.js';
import { useKairos } from '../support/kairos.js';

describe('kairos events', () => {
  const { kairos, client } = useKairos({ roles: ['api'] });

  const cli = async (...argv: string[]): Promise<{ code: number; text: string }> => {
    const lines: string[] = [];
    const code = await runCli(argv, { line: (l) => lines.push(l) }, { KAIROS_URL: kairos.url });
    return { code, text: lines.join('\n') };
  };

  it('sends events through the API, says what each started, lists them newest first and by name, and shows one', async () => {
    const schedule = await client.post('/v1/schedules', { name: 'welcome-pro', on: { event: 'order.paid', match: { 'data.plan': 'pro' } }, target: { type: 'handler', name: 'echo' } });
    expect(schedule.status).toBe(201);

    const sent = await cli('events', 'send', 'order.paid', '{"orderId":"o-7","plan":"pro"}', '--id', 'order-o-7-paid');
    expect(sent.code).toBe(0);
    const paid = (await client.get('/v1/events/order-o-7-paid')).body as { runs: string[]; receivedAt: string };
    expect(paid.runs).toHaveLength(1);
    expect(sent.text).toBe(
      [`sent event order-o-7-paid (order.paid)`, `  received: ${paid.receivedAt}`, '  data: {"orderId":"o-7","plan":"pro"}', `  started 1 run: ${paid.runs[0]}`].join('\n'),
    );
    const run = (await client.get(`/v1/runs/${paid.runs[0]}`)).body;
    expect(run).toMatchObject({ scheduleId: schedule.body.id, origin: 'event', eventId: 'order-o-7-paid' });

    // The same id again: the first event, and nothing started again.
    const again = await cli('events', 'send', 'order.paid', '{"plan":"pro"}', '--id', 'order-o-7-paid');
    expect(again.text).toMatch(/^event order-o-7-paid \(order\.paid\) was sent before: the first is answered, nothing started again\n/);
    expect(again.text).toContain('  data: {"orderId":"o-7","plan":"pro"}');
    expect((await client.get(`/v1/runs?scheduleId=${schedule.body.id}`)).body.items).toHaveLength(1);

    // JSON output is the API's answer; no data is null; a plan the match does not take starts nothing.
    const free = JSON.parse((await cli('events', 'send', 'order.paid', '{"plan":"free"}', '--output', 'json')).text);
    expect(free).toEqual((await client.get(`/v1/events/${free.id}`)).body);
    expect(free).toMatchObject({ name: 'order.paid', data: { plan: 'free' }, deduped: false, runs: [], skipped: [], resumed: [] });
    const ping = await cli('events', 'send', 'ping', '--json');
    expect(JSON.parse(ping.text)).toMatchObject({ name: 'ping', data: null, deduped: false });
    expect((await cli('events', 'send', 'note', '"just text"')).text).toContain('  data: "just text"\n  started 0 runs');

    // A paused schedule is skipped, and says so.
    expect((await client.post(`/v1/schedules/${schedule.body.id}/pause`)).status).toBe(200);
    const skipped = await cli('events', 'send', 'order.paid', '{"plan":"pro"}');
    expect(skipped.text).toContain(`  started 0 runs\n  skipped 1 schedule: ${schedule.body.id} (SCHEDULE_PAUSED)`);

    const listed = await cli('events');
    expect(listed.code).toBe(0);
    const lines = listed.text.split('\n');
    expect(lines[0]).toMatch(/^received\s+id\s+name\s+runs\s+skipped\s+resumed\s+data$/);
    expect(lines.slice(1).map((l) => l.split(/\s+/)[2])).toEqual(['order.paid', 'note', 'ping', 'order.paid', 'order.paid']);
    expect(lines.at(-1)).toMatch(new RegExp(`^${paid.receivedAt}\\s+order-o-7-paid\\s+order\\.paid\\s+1\\s+0\\s+0\\s+\\{"orderId":"o-7","plan":"pro"\\}$`));
    expect(lines[1]).toMatch(/\s+order\.paid\s+0\s+1\s+0\s+\{"plan":"pro"\}$/);

    const byName = JSON.parse((await cli('events', 'list', '--name', 'order.paid', '--limit', '2', '--output', 'json')).text);
    expect(byName).toEqual((await client.get('/v1/events?name=order.paid&limit=2')).body.items);
    expect(byName.map((e: { name: string }) => e.name)).toEqual(['order.paid', 'order.paid']);
    expect(byName[1].id).toBe(free.id);
    expect((await cli('events', 'list', '--name', 'order.shipped')).text).toBe('no events named order.shipped');

    const shown = await cli('events', 'get', 'order-o-7-paid');
    expect(shown.text).toBe(sent.text.replace('sent event', 'event'));
    expect(JSON.parse((await cli('events', 'get', 'order-o-7-paid', '--json')).text)).toEqual(paid);
  });

  it('words its own refusals and passes on the API\'s', async () => {
    const before = (await client.get('/v1/events?limit=500')).body.items.length;
    await expect(cli('events', 'send')).rejects.toThrow(/events send needs an event name/);
    await expect(cli('events', 'send', 'order.paid', '{plan: pro}')).rejects.toThrow(/the event's data must be JSON/);
    await expect(cli('events', 'send', 'order.paid', '{}', 'more')).rejects.toThrow(/one JSON argument/);
    await expect(cli('events', 'send', 'order paid')).rejects.toThrow(/name must be 1 to 128 letters/);
    await expect(cli('events', 'send', 'order.paid', '--id', 'x'.repeat(201))).rejects.toThrow(/id/);
    await expect(cli('events', 'get', 'nowhere')).rejects.toThrow(/nowhere/);
    await expect(cli('events', 'get')).rejects.toThrow(/needs an event id/);
    await expect(cli('events', 'poke')).rejects.toThrow(/use: kairos events/);
    await expect(cli('events', 'list', '--limit', '0')).rejects.toThrow(/--limit must be an integer/);
    expect((await client.get('/v1/events?limit=500')).body.items).toHaveLength(before);
    expect((await cli('--help')).text).toContain('events send NAME [JSON] [--id ID]');
  });
});
