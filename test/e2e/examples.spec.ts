/**
 * The examples under examples/, each run as a user runs it: the folder copied into a project with
 * the packed @kairos/sdk installed (see packed-sdk.ts), `node main.mjs` with KAIROS_URL,
 * KAIROS_API_KEY and the cluster's DATABASE_URL, REDIS_URL and KAIROS_QUEUE_PREFIX, against one
 * Kairos with every role, spawned from the build with keys required. Each runs to completion by
 * itself: it must exit 0 having printed the line that shows what it demonstrates. The webhook
 * receiver is a server: it must check the signature of a real delivery and refuse an unsigned one.
 */
import { cp, mkdir, mkdtemp, readdir, rm, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, builtMain } from '../support/build.js';
import { SPAWNING_TIMEOUT_MS, issueKey, spawnKairos, useTestEnvironment, type KairosChild } from '../support/kairos.js';
import { spawnProcess } from '../support/processes.js';
import { installedSdk } from '../sdk/packed-sdk.js';

/** Each example that runs to completion, and the line its output must hold. */
const EXAMPLES: Record<string, RegExp> = {
  worker: /^3 scheduled runs succeeded$/m,
  steps: /^run succeeded: \{"loaded":600,"audited":3\}$/m,
  'durable-function': /^the signal resumed the run: \{"approved":true,"by":"grace","account":"acct-ada@example\.com"\}$/m,
  events: /^the event's run succeeded: \{"orderId":"o-\d+","shipped":true,"trackingId":"TRK-1234"\}$/m,
  sensor: /^the sensor imported 3 files, one run each; its cursor is "2026-12-03\.csv"/m,
  apply: /^0 to create, 0 to update, 0 to delete, 2 unchanged: dry run, nothing applied\napplied: the cluster matches kairos\.yaml$/m,
  client: /^retried run \S+ as run \S+ \(origin retry\): dead/m,
};

describe('the examples', () => {
  const t = useTestEnvironment();
  let kairos: KairosChild;
  let url: string;
  let apiKey: string;
  let examples: string;

  beforeAll(async () => {
    // Loopback HTTP targets: the webhook receiver listens on this machine.
    kairos = spawnKairos('kairos', t.env({ KAIROS_AUTH: 'required', KAIROS_HTTP_ALLOWLIST: '127.0.0.1' }));
    const [installed, ready] = await Promise.all([installedSdk(), kairos.ready]);
    url = ready;
    apiKey = await issueKey(t, 'default', 'read,write');
    examples = await mkdtemp(join(installed, 'examples-'));
    await cp(join(ROOT, 'examples'), examples, { recursive: true, filter: (path) => !path.includes('node_modules') });
    // The receiver's one dependency beyond the SDK, from the repository's own modules.
    await mkdir(join(examples, 'node_modules'));
    await symlink(join(ROOT, 'node_modules/express'), join(examples, 'node_modules/express'));
  }, SPAWNING_TIMEOUT_MS);

  afterAll(async () => {
    kairos?.process.kill('SIGTERM');
    await kairos?.exited;
    if (examples) await rm(examples, { recursive: true, force: true });
  });

  /** `node main.mjs` in the example's folder, with what a user sets. */
  const run = (name: string, env: Record<string, string> = {}) =>
    spawnProcess(process.execPath, ['main.mjs'], {
      cwd: join(examples, name),
      // The CLI of the apply example is the build's: the copied folder is outside the repository.
      env: { ...process.env, ...t.env({ KAIROS_URL: url, KAIROS_API_KEY: apiKey, KAIROS_CLI: join(ROOT, builtMain('cli')), ...env }) },
    });

  it('has a test for each folder', async () => {
    const folders = (await readdir(join(ROOT, 'examples'), { withFileTypes: true })).filter((e) => e.isDirectory() && e.name !== 'node_modules').map((e) => e.name);
    expect(folders.sort()).toEqual([...Object.keys(EXAMPLES), 'webhook-receiver'].sort());
  });

  it.concurrent.for(Object.entries(EXAMPLES))('runs %s to completion', async ([name, line], { expect }) => {
    const child = run(name);
    const code = await child.exited;
    expect(code, child.output()).toBe(0);
    expect(child.output()).toMatch(line);
  });

  it.concurrent('checks the signature of a delivery in the webhook receiver', async ({ expect }) => {
    const headers = { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' };
    const { secret } = (await (await fetch(`${url}/v1/signing-secret`, { headers })).json()) as { secret: string };
    const receiver = run('webhook-receiver', { KAIROS_SIGNING_SECRET: secret, PORT: '0' });
    try {
      const port = (await receiver.until(/listening on port (\d+)/, 'the receiver to listen'))[1];
      const hook = `http://127.0.0.1:${port}/hooks/kairos`;
      const unsigned = await fetch(hook, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"runId":"forged"}' });
      expect(unsigned.status).toBe(401);

      const created = (await (await fetch(`${url}/v1/runs`, { method: 'POST', headers, body: JSON.stringify({ target: { type: 'http', url: hook }, payload: { invoice: 42 } }) })).json()) as { id: string };
      await receiver.until(new RegExp(`run ${created.id} attempt 1 \\{ invoice: 42 \\}`), 'the receiver to accept the delivery', 30_000);
    } finally {
      receiver.process.kill('SIGTERM');
    }
    expect(await receiver.exited).toBe(0);
  });
});
