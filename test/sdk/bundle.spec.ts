/**
 * The packed SDK carries what a worker reads, not the server's variable table: of the
 * configuration only the readers, the ledger's and the transport's variables
 * (`@kairos/config/connections`) and the rest of what a worker reads (`@kairos/config/worker`); none
 * of the API's, the scheduler's, retention's, alerts' or tracing's variables, nor the documentation's
 * table written from them.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CONFIGURATION, Variable, configVariables, configurationTable } from '@kairos/config';
import * as connections from '@kairos/config/connections';
import { WORKER_CONFIGURATION } from '@kairos/config/worker';
import { fullBuild } from './packed-sdk.js';

describe('the packed SDK bundle', () => {
  it("declares the variables a worker reads and none of the server's others", async () => {
    const bundle = readFileSync(join(await fullBuild(), 'dist/index.js'), 'utf8');
    const declared = (name: string): boolean => new RegExp(`["'\`]${name}["'\`]`).test(bundle);
    const workerReads = configVariables(WORKER_CONFIGURATION);
    const carried = new Set<Variable<unknown>>([...workerReads, ...Object.values(connections).filter((v) => v instanceof Variable)]);
    const serverOnly = configVariables(CONFIGURATION)
      .filter((v) => !carried.has(v))
      .map((v) => v.name);
    expect(serverOnly).toEqual(expect.arrayContaining(['KAIROS_ROLES', 'PORT', 'KAIROS_LEADER_TTL', 'KAIROS_RETENTION', 'LOG_FORMAT']));
    expect(serverOnly.filter(declared)).toEqual([]);
    expect(workerReads.map((v) => v.name).filter((name) => !declared(name))).toEqual([]);
    expect(bundle).not.toContain(configurationTable().split('\n')[0]);
  }, 240_000);
});
