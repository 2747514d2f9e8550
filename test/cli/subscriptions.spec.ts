/**
 * Subscriptions operated from outside Kairos: the SDK client's methods and `kairos subscriptions`,
 * each against a Kairos started in this process whose HTTP allow-list admits a receiver on
 * 127.0.0.1, so a test event is really delivered and shows in the deliveries.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '@kairos/domain';
import { KairosApiError, KairosClient, type Subscription, type SubscriptionDelivery } from '@kairos/sdk';
import { runCli } from '../../apps/cli/src/cli.js';
import { useKairos, waitFor } from '../support/kairos.js';

const collect = async <T>(items: AsyncIterable<T>): Promise<T[]> => {
  const all: T[] = [];
  for await (const item of items) all.push(item);
  return all;
};

describe('subscriptions through the SDK client and the command line', () => {
  const { kairos } = useKairos({ env: { KAIROS_HTTP_ALLOWLIST: '127.0.0.1' } });
  let client: KairosClient;
  let receiver: Server;
  let url: string;
  const received: { headers: IncomingHttpHeaders; body: string }[] = [];

  beforeAll(async () => {
    receiver = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        received.push({ headers: req.headers, body });
        res.writeHead(200).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
    client = new KairosClient({ baseUrl: kairos.url });
  });

  afterAll(async () => {
    receiver?.closeAllConnections();
    await new Promise((resolve) => receiver?.close(resolve));
  });

  /** The subscription's newest delivery, once it was taken. */
  const delivered = (id: string) =>
    waitFor(async () => {
      const [newest] = await collect(client.subscriptions.deliveries(id));
      return newest?.state === 'delivered' ? newest : undefined;
    }, `a delivery of subscription ${id}`);

  const cli = async (...argv: string[]): Promise<{ code: number; text: string }> => {
    const lines: string[] = [];
    const code = await runCli(argv, { line: (l) => lines.push(l) }, { KAIROS_URL: kairos.url });
    return { code, text: lines.join('\n') };
  };

  it('manages subscriptions with the client: create, list page by page, get, update, pause, resume, test, deliveries, delete', async () => {
    const schedule = await client.schedules.create({ name: 'invoices', every: '1h', paused: true, expect: { succeededWithin: '15m' }, target: { type: 'handler', name: 'echo' } });
    expect(schedule).toMatchObject({ expect: { succeededWithin: '15m' }, lateSince: null });

    const created = await client.subscriptions.create({
      url,
      events: ['run.dead', 'schedule.late'],
      filter: { scheduleIds: [schedule.id], labels: { team: 'billing' } },
      description: 'billing alerts',
    });
    expect(created).toMatchObject({
      url,
      events: ['run.dead', 'schedule.late'],
      filter: { scheduleIds: [schedule.id], labels: { team: 'billing' } },
      format: 'json',
      description: 'billing alerts',
      state: 'active',
      disabledReason: null,
      failingSince: null,
    });
    const slack = await client.subscriptions.create({ url, events: ['schedule.resumed'], format: 'slack', paused: true });
    expect(slack).toMatchObject({ format: 'slack', state: 'paused', filter: { scheduleIds: [], labels: {} }, description: null });
    const listed: Subscription[] = await collect(client.subscriptions.list({ limit: 1 }));
    expect(listed.map((s) => s.id)).toEqual([slack.id, created.id]);
    expect(await client.subscriptions.get(created.id)).toEqual(created);

    // A new filter replaces the whole filter; the fields not given stay.
    const updated = await client.subscriptions.update(created.id, { events: ['run.dead'], filter: null });
    expect(updated).toMatchObject({ events: ['run.dead'], filter: { scheduleIds: [], labels: {} }, description: 'billing alerts', state: 'active' });
    expect(await client.subscriptions.update(created.id, { paused: true })).toMatchObject({ state: 'paused' });
    expect(await client.subscriptions.resume(created.id)).toMatchObject({ state: 'active' });
    expect(await client.subscriptions.pause(created.id)).toMatchObject({ state: 'paused' });

    // Only an active subscription is tested; its ping is delivered like any event.
    const refused = await client.subscriptions.test(created.id).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(KairosApiError);
    expect(refused).toMatchObject({ status: 409, code: 'INVALID_STATE' });
    await client.subscriptions.resume(created.id);
    const { eventId } = await client.subscriptions.test(created.id);
    const delivery: SubscriptionDelivery = await delivered(created.id);
    expect(delivery).toMatchObject({ eventId, eventType: 'ping', nextAttemptAt: null, body: { id: eventId, type: 'ping' } });
    expect(delivery.attempts).toEqual([expect.objectContaining({ attempt: 1, statusCode: 200, error: null })]);
    expect(received.some((r) => r.headers['idempotency-key'] === eventId)).toBe(true);

    const invalid = await client.subscriptions.create({ url, events: [] }).catch((e: unknown) => e);
    expect(invalid).toMatchObject({ status: 400, code: 'VALIDATION_FAILED', field: 'events' });

    await client.subscriptions.delete(created.id);
    await client.subscriptions.delete(slack.id);
    expect(await client.subscriptions.get(created.id).catch((e: unknown) => e)).toMatchObject({ status: 404, code: 'NOT_FOUND' });
    expect(await collect(client.subscriptions.list())).toEqual([]);
  });

  it('is operated from the command line through the API', async () => {
    const schedule = await client.schedules.create({ name: 'ledger-close', every: '1h', paused: true, target: { type: 'handler', name: 'echo' } });
    const made = await cli(
      'subscriptions', 'create', '--url', url, '--events', 'run.dead,schedule.late', '--label', 'team=billing', '--schedule', schedule.id,
      '--format', 'slack', '--description', 'pager', '--paused', '--output', 'json',
    );
    expect(made.code).toBe(0);
    const paused = JSON.parse(made.text) as Subscription;
    expect(paused).toMatchObject({ url, events: ['run.dead', 'schedule.late'], filter: { scheduleIds: [schedule.id], labels: { team: 'billing' } }, format: 'slack', description: 'pager', state: 'paused' });
    const plain = await cli('subscriptions', 'create', '--url', url, '--events', 'schedule.resumed');
    expect(plain.code).toBe(0);
    const id = /^created subscription (\S+) \(active\): schedule\.resumed to (\S+)$/.exec(plain.text)?.[1];
    expect(id).toBeTypeOf('string');

    const listed = await cli('subscriptions');
    expect(listed.code).toBe(0);
    expect(listed.text).toMatch(/^id\s+state\s+url\s+events\s+filter\s+format\s+failing since$/m);
    expect(listed.text).toMatch(new RegExp(`^${id}\\s+active\\s+\\S+\\s+schedule\\.resumed\\s+-\\s+json\\s+-$`, 'm'));
    expect(listed.text).toMatch(new RegExp(`^${paused.id}\\s+paused\\s+\\S+\\s+run\\.dead,schedule\\.late\\s+team=billing 1 schedule\\s+slack\\s+-$`, 'm'));
    expect(JSON.parse((await cli('subscriptions', 'list', '--output', 'json')).text).map((s: Subscription) => s.id)).toEqual([id, paused.id]);

    const shown = (await cli('subscriptions', 'get', paused.id)).text;
    expect(shown).toContain(`subscription ${paused.id}: paused`);
    expect(shown).toContain(`  slack to ${url}`);
    expect(shown).toContain(`  filter: schedules ${schedule.id}; labels team=billing`);
    expect(shown).toContain('  description: pager');
    expect((await cli('subscriptions', 'resume', paused.id)).text).toBe(`resumed subscription ${paused.id} (${url})`);
    expect((await cli('subscriptions', 'pause', paused.id, '--json')).text).toContain('"state": "paused"');

    const sent = await cli('subscriptions', 'test', id!);
    expect(sent.code).toBe(0);
    const eventId = /^sent a test event (\S+) to subscription/.exec(sent.text)?.[1];
    expect((await delivered(id!)).eventId).toBe(eventId);
    const deliveries = await cli('subscriptions', 'deliveries', id!);
    expect(deliveries.code).toBe(0);
    expect(deliveries.text).toMatch(/^id\s+event type\s+state\s+attempts\s+last status\/error\n\d+\s+ping\s+delivered\s+1\s+200$/);
    expect(JSON.parse((await cli('subscriptions', 'deliveries', id!, '--output', 'json')).text)).toEqual([expect.objectContaining({ eventId, eventType: 'ping' })]);
    await expect(cli('subscriptions', 'test', paused.id)).rejects.toThrow(/resume it/);

    expect(await cli('subscriptions', 'delete', id!)).toEqual({ code: 0, text: `deleted subscription ${id} and its deliveries` });
    expect(JSON.parse((await cli('subscriptions', 'delete', paused.id, '--output', 'json')).text)).toEqual({ id: paused.id, deleted: true });
    expect((await cli('subscriptions')).text).toBe('id  state  url  events  filter  format  failing since');

    await expect(cli('subscriptions', 'get', newId())).rejects.toThrow(/does not exist/);
    await expect(cli('subscriptions', 'create', '--events', 'run.dead')).rejects.toThrow(/needs --url and --events/);
    await expect(cli('subscriptions', 'create', '--url', url, '--events', 'run.dead', '--label', 'team')).rejects.toThrow(/--label must be key=value/);
    await expect(cli('subscriptions', 'create', '--url', url, '--events', 'run.exploded')).rejects.toThrow(/must be one of run\.succeeded/);
    await expect(cli('subscriptions', 'pause')).rejects.toThrow(/needs a subscription id/);
    await expect(cli('subscriptions', 'poke', id!)).rejects.toThrow(/use: kairos subscriptions/);
  });
});
