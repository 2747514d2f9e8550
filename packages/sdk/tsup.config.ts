// Builds the publishable package: the SDK's sources and the pure Kairos code they share with the
// server (verdicts and backoff, queue names and job shapes, the variables a worker reads, the
// Postgres pool helpers and the database clock) bundled into one ES module with one bundled
// declaration file, so the package depends on nothing of the monorepo, only on what its
// package.json declares. None of the server's SQL is in it: the worker speaks to the ledger through
// the worker protocol, and none of the server's other variables: the worker reads its settings from
// `@kairos/config/worker`, not from the whole table.
import { readFileSync } from 'node:fs';
import { defineConfig } from 'tsup';

const manifest = JSON.parse(readFileSync(new URL('./package.json', import.meta.url), 'utf8')) as {
  dependencies: Record<string, string>;
  peerDependencies: Record<string, string>;
};
const LIBRARY_PATHS = {
  ...Object.fromEntries(['domain', 'config', 'queue'].map((lib) => [`@kairos/${lib}`, [`libs/${lib}/src/index.ts`]])),
  '@kairos/config/connections': ['libs/config/src/connections.ts'],
  '@kairos/config/worker': ['libs/config/src/worker-config.ts'],
  '@kairos/ledger/postgres': ['libs/ledger/src/database.ts'],
  '@kairos/ledger/clock': ['libs/ledger/src/clock/database-clock.ts'],
  '@kairos/process/loop': ['libs/process/src/loop.ts'],
  '@kairos/process/process-identity': ['libs/process/src/process-identity.ts'],
  '@kairos/process/run-dispatcher': ['libs/process/src/run-dispatcher.ts'],
  '@kairos/telemetry/log-context': ['libs/telemetry/src/log-context.ts'],
  '@kairos/telemetry/trace-context': ['libs/telemetry/src/trace-context.ts'],
};
const external = [...Object.keys(manifest.dependencies), ...Object.keys(manifest.peerDependencies)];

export default defineConfig({
  entry: { index: 'src/index.ts' },
  format: ['esm'],
  target: 'node20',
  platform: 'node',
  outDir: 'dist',
  clean: true,
  sourcemap: false,
  tsconfig: '../../tsconfig.json',
  // Every @kairos/* import is the monorepo's own source: bundle it. Only declared packages stay imports.
  external: external.map((name) => new RegExp(`^${name.replace('/', '\\/')}(/.*)?$`)),
  noExternal: [/^@kairos\//],
  dts: {
    resolve: [/^@kairos\//],
    // The declaration build resolves the monorepo's aliases from the repository root.
    compilerOptions: { baseUrl: '../..', rootDir: '../..', paths: LIBRARY_PATHS, ignoreDeprecations: '6.0' },
  },
});
