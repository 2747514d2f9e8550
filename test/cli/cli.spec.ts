/** The kairos command line against a live ledger: status, listings, explain, fsck and migrate. */
import { beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../apps/cli/src/cli.js';
import { api, runInState, useKairos, waitFor } from '../support/kairos.js';

describe('the kairos CLI', () => {
  let scheduleId: string;
  let deadRunId: string;
  let graphRunId: string;

  const cli = async (...argv: string[]): Promise<{ code: number; out: string }> => {
    const lines: string[] = [];
    const code = await runCli(argv, { line: (l) => lines.push(l) }, { DATABASE_URL: t.databaseUrl, KAIROS_URL: kairos.url });
    return { code, out: lines.join('\n') };
  };

  const { t, kairos } = useKairos();

  beforeAll(async () => {
    const client = api(kairos.url);
    scheduleId = (await client.post('/v1/schedules', { name: 'cli-tour', every: '1s', target: { type: 'handler', name: 'noop' } })).body.id;
    deadRunId = (
      await client.post('/v1/runs', {
        target: { type: 'handler', name: 'fail' },
        payload: { message: 'nope' },
        retry: { maxAttempts: 2, backoff: { type: 'fixed', base: '100ms', max: '100ms', jitter: 0 } },
      })
    ).body.id;
    graphRunId = (
      await client.post('/v1/runs', {
        steps: [
          { name: 'fetch', target: { type: 'handler', name: 'echo' } },
          { name: 'parse', dependsOn: ['fetch'], target: { type: 'handler', name: 'fail' }, retry: { maxAttempts: 1 } },
          { name: 'store', dependsOn: ['parse'], target: { type: 'handler', name: 'noop' } },
          { name: 'notify', dependsOn: ['parse'], when: 'always', target: { type: 'handler', name: 'noop' } },
        ],
        payload: { message: 'bad input' },
      })
    ).body.id;
    await runInState(client, deadRunId, 'dead');
    await runInState(client, graphRunId, 'dead');
    await waitFor(async () => ((await client.get(`/v1/runs?scheduleId=${scheduleId}&state=succeeded`)).body.items.length >= 2 ? true : undefined), 'two slots');
  });

  it('status names the leader and counts schedules and runs', async () => {
    const { code, out } = await cli('status');
    expect(code).toBe(0);
    expect(out).toMatch(/^database +postgres 127\.0\.0\.1:5432\/\S+$/m);
    // The command line's environment names no REDIS_URL: the Postgres transport.
    expect(out).toMatch(/^transport +postgres \(schema kairos_transport of the ledger's database\)$/m);
    expect(out).toMatch(/^leader +\S+:\d+:[0-9a-f]{8} \(epoch 1, lease until /m);
    expect(out).toMatch(/^schedules +active 1$/m);
    // The dead run and the multi-step run; its dead step counts with it, not on its own.
    expect(out).toMatch(/^runs +.*dead 2.*succeeded \d+/m);
    // The one scheduler owns every tick partition; its host's clock is the database's host's, within a few ms.
    expect(out).toMatch(/^\S+:\d+:[0-9a-f]{8} +\S+ +\S+ +[+-]0\.0\d\d s +0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15$/m);
    expect(out).toMatch(/^workers \(heard from in the last minute\)\n.*\n\S+ +default +\S+ +[+-]0\.0\d\d s$/m);
    expect(out).toMatch(/^ledger +[\d.]+ [kMG]?B on disk/m);
    expect(out).toMatch(/^runs +\d+ +[\d.]+ [kMG]?B$/m);
    const json = JSON.parse((await cli('status', '--json')).out);
    expect(json.leader.alive).toBe(true);
    expect(json.schedulers).toHaveLength(1);
    expect(json.schedulers[0].partitions).toHaveLength(16);
    expect(Math.abs(json.schedulers[0].clock_offset_ms)).toBeLessThan(50);
    expect(json.workers.map((w: { queue: string }) => w.queue)).toContain('default');
    expect(json.unownedPartitions).toEqual([]);
    expect(json.ledger.databaseBytes).toBeGreaterThan(0);
    expect(json.ledger.tables.map((tb: { table: string }) => tb.table)).toEqual(expect.arrayContaining(['runs', 'run_events', 'ticks', 'outbox']));
  });

  it('lists schedules and runs, with filters', async () => {
    expect((await cli('schedules')).out).toMatch(new RegExp(`^${scheduleId} +cli-tour +every 1000ms +active .* -$`, 'm'));
    // A cron shows what its DST policy means for it: auto resolved, explicit sides as declared.
    const client = api(kairos.url);
    const hourly = (await client.post('/v1/schedules', { name: 'cli-hourly', cron: '0 * * * *', timezone: 'Europe/Berlin', target: { type: 'handler', name: 'noop' } })).body;
    const daily = (
      await client.post('/v1/schedules', { name: 'cli-daily', cron: '30 2 * * *', dst: { gap: 'skip' }, timezone: 'Europe/Berlin', target: { type: 'handler', name: 'noop' } })
    ).body;
    const fair = (
      await client.post('/v1/schedules', {
        name: 'cli-fair',
        cron: '0 0 1 1 *',
        priority: 1,
        fairness: { key: 'tenant-{{payload.tenantId}}', weight: 2 },
        payload: { tenantId: 'a' },
        target: { type: 'handler', name: 'noop' },
      })
    ).body;
    expect(fair).toMatchObject({ priority: 1, fairness: { key: 'tenant-{{payload.tenantId}}', weight: 2 } });
    const listed = (await cli('schedules')).out;
    expect(listed).toMatch(/^id +name +when +status +next fire +fired +dst$/m);
    // Under the table, only the schedules with a priority other than 3 or a fairness key.
    expect(listed).toMatch(/\n\nruns made with a priority or a fairness key:\n {2}cli-fair: priority 1, fairness key tenant-\{\{payload\.tenantId\}\} \(weight 2\)$/);
    expect(listed).toMatch(new RegExp(`^${hourly.id} +cli-hourly +0 \\* \\* \\* \\* +active .* gap auto \\(skip\\), overlap auto \\(both\\)$`, 'm'));
    expect(listed).toMatch(new RegExp(`^${daily.id} +cli-daily +30 2 \\* \\* \\* +active .* gap skip, overlap auto \\(first\\)$`, 'm'));
    const json = JSON.parse((await cli('schedules', '--json')).out);
    expect(json.find((s: { id: string }) => s.id === hourly.id).dst).toEqual({
      gap: 'auto',
      overlap: 'auto',
      resolved: { gap: 'skip', overlap: 'both' },
      description: 'gap auto (skip), overlap auto (both): the minute or hour field starts with *, so it follows real time',
    });
    const dead = await cli('runs', '--state', 'dead');
    expect(dead.out.split('\n')).toHaveLength(3);
    expect(dead.out).toContain(deadRunId);
    expect(dead.out).toContain(graphRunId);
    expect(dead.out).toMatch(/2\/2 +HANDLER_ERROR/);
    const bySchedule = JSON.parse((await cli('runs', '--schedule', scheduleId, '--json', '--limit', '1')).out);
    expect(bySchedule).toHaveLength(1);
    expect(bySchedule[0].scheduleId).toBe(scheduleId);
    await expect(cli('runs', '--state', 'napping')).rejects.toThrow(/--state must be one of/);
  });

  it('explains a run: its attempts and every transition in order, with reasons', async () => {
    const { code, out } = await cli('explain', deadRunId);
    expect(code).toBe(0);
    const lines = out.split('\n');
    expect(lines[0]).toBe(`run ${deadRunId}: dead (HANDLER_ERROR)`);
    expect(out).toMatch(/attempt 1 at epoch 1 on \S+: failed \(HANDLER_ERROR\)/);
    expect(out).toMatch(/attempt 2 at epoch 2 on \S+: failed \(HANDLER_ERROR\)/);
    const kinds = lines.filter((l) => /^\d{4}-/.test(l)).map((l) => l.split(/\s+/)[1]);
    expect(kinds).toEqual(['queued', 'claimed', 'retry_scheduled', 'claimed', 'dead']);
    expect(out).toMatch(/retry_scheduled +running → queued .*\[HANDLER_ERROR: the handler threw an error\]/);
    await expect(cli('explain', '01a226b4-d238-7c31-b6af-28c7c8951e9e')).rejects.toThrow(/does not exist/);
    // The default priority and no fairness key go unsaid; others are told.
    expect(out).not.toMatch(/priority|fairness/);
    const client = api(kairos.url);
    const later = (
      await client.post('/v1/runs', {
        target: { type: 'handler', name: 'echo' },
        priority: 5,
        fairness: { key: 'tenant-{{payload.tenantId}}' },
        payload: { tenantId: 'b' },
        availableAt: '2030-01-01T00:00:00Z',
      })
    ).body.id as string;
    expect((await cli('explain', later)).out.split('\n')).toContain('  priority 5, fairness key tenant-b (weight 1)');
    await client.post(`/v1/runs/${later}/cancel`, {});
  });

  it("explains a multi-step run: its graph layer by layer, and each step's story", async () => {
    const { code, out } = await cli('explain', graphRunId);
    expect(code).toBe(0);
    const lines = out.split('\n');
    expect(lines[0]).toBe(`run ${graphRunId}: dead (STEP_FAILED)`);
    expect(out).toContain('step parse ended dead (HANDLER_ERROR)');
    expect(out).toMatch(/^ {4}1\. fetch +succeeded first, attempt 1\/3, \d+ ms$/m);
    expect(out).toMatch(/^ {4}2\. parse +dead +after fetch, attempt 1\/1, \d+ ms HANDLER_ERROR/m);
    expect(out).toMatch(/^ {4}3\. store +skipped +after parse, attempt 1\/3 UPSTREAM_FAILED: upstream step parse did not succeed$/m);
    expect(out).toMatch(/^ {7}notify +succeeded after parse \(always\), attempt 1\/3, \d+ ms$/m);
    expect(out).toMatch(/^step store \(run \S+\): skipped$/m);
    expect(out).toMatch(/^ {2}\S+ +skipped +queued → cancelled +by steps \[UPSTREAM_FAILED: /m);
    const json = JSON.parse((await cli('explain', graphRunId, '--json')).out);
    expect(json.steps.map((s: { run: { stepName: string } }) => s.run.stepName)).toEqual(['fetch', 'parse', 'store', 'notify']);
  });

  it('sends a signal through the API, once per name', async () => {
    const client = api(kairos.url);
    const later = (await client.post('/v1/runs', { target: { type: 'handler', name: 'echo' }, availableAt: '2030-01-01T00:00:00Z' })).body.id as string;
    const sent = await cli('signal', later, 'approval', '{"approved":true}');
    expect(sent).toEqual({ code: 0, out: `sent signal approval to run ${later}: kept until the run waits for it` });
    await expect(cli('signal', later, 'approval')).rejects.toThrow(/already sent to run/);
    await expect(cli('signal', later, 'other', '{not json')).rejects.toThrow(/must be JSON/);
    expect((await t.db.query(`SELECT body FROM run_signals WHERE run_id = $1`, [later])).rows).toEqual([{ body: { approved: true } }]);
  });

  it('fsck passes a healthy ledger and names what breaks an invariant', async () => {
    const healthy = await cli('fsck');
    expect(healthy).toEqual({ code: 0, out: 'ledger ok: no invariant is broken' });
    await t.db.query(`UPDATE runs SET reason_code = 'SOMETHING_ELSE' WHERE id = $1`, [deadRunId]);
    const broken = await cli('fsck', '--json');
    expect(broken.code).toBe(1);
    expect(JSON.parse(broken.out)).toEqual([
      { check: 'terminal-reason', subject: `run ${deadRunId}`, detail: 'terminal run has reason code SOMETHING_ELSE, not in the catalogue' },
    ]);
    await t.db.query(`UPDATE runs SET reason_code = 'HANDLER_ERROR' WHERE id = $1`, [deadRunId]);

    const orphan = '01a226b4-d238-7c31-b6af-28c7c8951e9f';
    await t.db.query(`INSERT INTO run_events (run_id, kind, actor) VALUES ($1, 'queued', 'test')`, [orphan]);
    const orphaned = await cli('fsck', '--json');
    expect(orphaned.code).toBe(1);
    expect(JSON.parse(orphaned.out)).toEqual([{ check: 'event-has-run', subject: `run ${orphan}`, detail: expect.stringMatching(/^event \d+ \(queued\) belongs to no run$/) }]);
    await t.db.query(`DELETE FROM run_events WHERE run_id = $1`, [orphan]);

    // A parked run whose sleep is not recorded would never be told why it waits.
    const later = (await api(kairos.url).post('/v1/runs', { target: { type: 'handler', name: 'echo' }, availableAt: '2030-01-01T00:00:00Z' })).body.id as string;
    await t.db.query(`UPDATE runs SET state = 'sleeping' WHERE id = $1`, [later]);
    const parked = await cli('fsck', '--json');
    expect(JSON.parse(parked.out)).toContainEqual({ check: 'parked-run-has-checkpoint', subject: `run ${later}`, detail: 'run is sleeping but has no sleep with its wake instant' });
    await t.db.query(`UPDATE runs SET state = 'queued' WHERE id = $1`, [later]);

    // No foreign key holds a run to its namespace: fsck does.
    const ownNamespace = (await t.db.query(`SELECT namespace_id FROM runs WHERE id = $1`, [later])).rows[0].namespace_id as string;
    const nowhere = '01a226b4-d238-7c31-b6af-28c7c8951eaa';
    await t.db.query(`UPDATE runs SET namespace_id = $2 WHERE id = $1`, [later, nowhere]);
    const homeless = await cli('fsck', '--json');
    expect(JSON.parse(homeless.out)).toContainEqual({ check: 'run-has-namespace', subject: `run ${later}`, detail: `belongs to namespace ${nowhere}, which does not exist` });
    await t.db.query(`UPDATE runs SET namespace_id = $2 WHERE id = $1`, [later, ownNamespace]);
    expect(await cli('fsck')).toEqual({ code: 0, out: 'ledger ok: no invariant is broken' });
  });

  it('migrate reports an up-to-date ledger, and usage errors exit 2', async () => {
    expect(await cli('migrate')).toEqual({ code: 0, out: 'the ledger is up to date' });
    expect((await cli()).code).toBe(2);
    expect((await cli('frobnicate')).code).toBe(2);
  });

  it('without DATABASE_URL, says the embedded Postgres runs only while Kairos does', async () => {
    // Port 1: no server answers there, as when Kairos is not running.
    await expect(runCli(['status'], { line: () => undefined }, { KAIROS_DATA_DIR: '/nowhere', KAIROS_EMBEDDED_PG_PORT: '1' })).rejects.toThrow(
      /^cannot reach Postgres at 127\.0\.0\.1:1 .*the embedded Postgres in \/nowhere\/pg, which runs while Kairos does: start Kairos \(npm start\) first, or set DATABASE_URL$/,
    );
  });
});
