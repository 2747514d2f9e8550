/**
 * The package promises declarations (`types` in its package.json and its export map): the build
 * writes them as one file beside the bundle, and like the bundle they import no monorepo library.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/build.js';
import { fullBuild } from './packed-sdk.js';

describe('the packed SDK declarations', () => {
  it('are built where package.json points, bundled, and declare the worker, the client and the signature check', async () => {
    const manifest = JSON.parse(readFileSync(join(ROOT, 'packages/sdk/package.json'), 'utf8')) as { types: string; exports: { '.': { types: string } } };
    expect(manifest.exports['.'].types).toBe(manifest.types);
    const built = await fullBuild();
    const types = join(built, manifest.types);
    expect(existsSync(types), `${manifest.types} is not built`).toBe(true);
    expect(existsSync(join(built, 'dist/index.js'))).toBe(true);
    const text = readFileSync(types, 'utf8');
    expect(text).not.toMatch(/(?:from\s*|import\s*\(\s*)["']@kairos\//);
    for (const name of ['KairosWorker', 'KairosClient', 'verifySignature']) expect(text).toMatch(new RegExp(`\\b${name}\\b`));
  }, 240_000);
});
