/**
 * The served OpenAPI document gives working clients in the generators people use, with their
 * default options: openapi-typescript (for openapi-fetch) and @hey-api/openapi-ts generate from
 * GET /docs/openapi.json, the tour of docs/getting-started.md written against each output
 * (test/api/client-tour/) type-checks with the project's TypeScript, and it runs against the live
 * API.
 */
import { execFile } from 'node:child_process';
import { cp, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import openapiTS, { astToString } from 'openapi-typescript';
import { createClient } from '@hey-api/openapi-ts';
import { useKairos } from '../support/kairos.js';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const TOURS = fileURLToPath(new URL('./client-tour/', import.meta.url));
const TSC = join(ROOT, 'node_modules/typescript/bin/tsc');

/** The compiler settings of the project, for a program outside it. */
const TSCONFIG = {
  compilerOptions: {
    target: 'ES2023',
    lib: ['ES2023', 'DOM'],
    module: 'NodeNext',
    moduleResolution: 'NodeNext',
    strict: true,
    noUncheckedIndexedAccess: true,
    skipLibCheck: true,
    // The check also emits JavaScript (only when it passes), so the tours then run on plain node.
    outDir: 'dist',
    noEmitOnError: true,
    types: ['node'],
  },
  include: ['**/*.ts'],
};

/** What each tour prints: the answers of create, list runs, ticks, preview, pause and a refusal. */
const TOUR_ANSWERS = {
  created: { status: 201, every: '1s', timezone: 'UTC', overlap: 'skip' },
  runs: expect.arrayContaining([{ state: 'succeeded', scheduleId: expect.any(String) }]),
  ticks: expect.arrayContaining(['triggered']),
  // 02:30 in Berlin: CET, then shifted out of the spring-forward gap on 28 March, then CEST.
  preview: ['2027-03-26T01:30:00Z', '2027-03-27T01:30:00Z', '2027-03-28T01:30:00Z', '2027-03-29T00:30:00Z', '2027-03-30T00:30:00Z'],
  paused: 'paused',
  refused: { status: 400, code: 'INVALID_CRON', field: 'cron' },
};

describe('clients generated from the served OpenAPI document', () => {
  let dir: string;

  /** Runs a compiled tour against the live API and returns what it printed. */
  async function runTour(name: string): Promise<unknown> {
    const { stdout } = await run(process.execPath, [join(dir, 'dist', name, 'tour.js'), kairos.url], { cwd: dir, timeout: 30_000 });
    return JSON.parse(stdout);
  }

  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const { kairos } = useKairos({ roles: ['api', 'scheduler', 'worker'] });

  beforeAll(async () => {
    // One directory, type-checked as one program: the tours, each next to its generator's output.
    dir = await mkdtemp(join(tmpdir(), 'kairos-clients-'));
    await writeFile(join(dir, 'tsconfig.json'), JSON.stringify(TSCONFIG));
    await writeFile(join(dir, 'package.json'), JSON.stringify({ type: 'module' }));
    await symlink(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
    for (const name of ['openapi-fetch', 'hey-api']) await cp(join(TOURS, `${name}.tour.ts`), join(dir, name, 'tour.ts'));
  });

  it('generate with default options, and the tours type-check against the output', async () => {
    const response = await fetch(`${kairos.url}/docs/openapi.json`);
    expect(response.status).toBe(200);
    const documentPath = join(dir, 'openapi.json');
    await writeFile(documentPath, await response.text());

    await writeFile(join(dir, 'openapi-fetch', 'schema.ts'), astToString(await openapiTS(new URL(`file://${documentPath}`))));
    await createClient({ input: documentPath, output: join(dir, 'hey-api', 'client'), logs: { level: 'silent' } });

    // The tours' @ts-expect-error lines make this fail when the types let a wrong request through.
    const result = await run(process.execPath, [TSC, '-p', join(dir, 'tsconfig.json')], { cwd: dir }).catch((error: { stdout: string }) => error);
    expect(result.stdout, 'tsc').toBe('');
  }, 120_000);

  it('run the tours against the live API, both clients at once', async () => {
    const [openapiFetch, heyApi] = await Promise.all([runTour('openapi-fetch'), runTour('hey-api')]);
    expect(openapiFetch, 'openapi-typescript + openapi-fetch').toEqual(TOUR_ANSWERS);
    expect(heyApi, '@hey-api/openapi-ts').toEqual(TOUR_ANSWERS);
  });
});
