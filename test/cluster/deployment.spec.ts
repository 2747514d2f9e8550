/**
 * The deployment files, checked against the code since no Docker or Kubernetes runs here: every
 * health check path is served by the running app, every environment variable is one Kairos reads,
 * every command starts an entry point the Dockerfile builds, ports agree, and the wiring
 * (depends_on, selectors, Secret and ConfigMap names, budgets) holds together.
 */
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { describeDatabase, loadConfig } from '@kairos/config';
import { useKairos, waitFor } from '../support/kairos.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const read = (path: string): string => readFileSync(`${ROOT}${path}`, 'utf8');
const KAIROS_SERVICES = ['api', 'scheduler', 'worker'] as const;

/** Every variable loadConfig reads, found by letting it read an environment that records each lookup. */
function configVariables(): Set<string> {
  const seen = new Set<string>();
  const env = new Proxy({} as Record<string, string | undefined>, {
    get: (_target, name) => {
      if (typeof name === 'string') seen.add(name);
      return undefined;
    },
  });
  loadConfig(env);
  return seen;
}

const dockerfile = read('Dockerfile');
const exposedPort = Number(/^EXPOSE (\d+)$/m.exec(dockerfile)?.[1]);
/** The Node options the image gives every process (the V8 heap budget). */
const imageNodeOptions = /^ENV NODE_OPTIONS=(\S+)$/m.exec(dockerfile)?.[1];
const scripts = JSON.parse(read('package.json')).scripts as Record<string, string>;
const compose = parse(read('docker-compose.yml'), { merge: true });
/** A compose value as compose reads it with the shell's variables unset: `${NAME:-default}` is `default`. */
const interpolated = (environment: Record<string, string>): Record<string, string> =>
  Object.fromEntries(Object.entries(environment).map(([k, v]) => [k, String(v).replace(/\$\{\w+:-([^}]*)\}/g, '$1')]));
const manifests = readdirSync(`${ROOT}deploy/kubernetes`)
  .filter((f) => f.endsWith('.yaml'))
  .flatMap((f) => parseAllDocuments(read(`deploy/kubernetes/${f}`)).map((d) => d.toJS()))
  .filter(Boolean);
const byKind = (kind: string): any[] => manifests.filter((m) => m.kind === kind);
const deployment = (component: string): any => byKind('Deployment').find((d) => d.metadata.labels['app.kubernetes.io/component'] === component);
const matches = (selector: Record<string, string>, labels: Record<string, string>): boolean =>
  Object.entries(selector).every(([k, v]) => labels[k] === v);

/**
 * `node dist/apps/<app>/src/main.js`: the app must exist, be built by `nest build`, and be what
 * package.json starts, with the Node options the image sets in its environment.
 */
function checkCommand(command: string[], role: string): void {
  expect(command.slice(0, 1)).toEqual(['node']);
  expect(command[1]).toBe(`dist/apps/${role}/src/main.js`);
  expect(existsSync(`${ROOT}apps/${role}/src/main.ts`)).toBe(true);
  expect(scripts[`start:${role}`]).toBe(`node ${imageNodeOptions} ${command.slice(1).join(' ')}`);
}

describe('docker-compose.yml and deploy/kubernetes', () => {
  const variables = configVariables();

  const { kairos } = useKairos();

  it('the compose health checks probe paths the app serves, on the port it listens on', async () => {
    for (const name of KAIROS_SERVICES) {
      const service = compose.services[name];
      const probe = (service.healthcheck.test as string[]).join(' ');
      const url = /http:\/\/127\.0\.0\.1:(\d+)(\/[\w/]+)/.exec(probe);
      expect(url, `${name} health check`).not.toBeNull();
      expect(Number(url![1])).toBe(exposedPort);
      expect(Number(service.environment.PORT)).toBe(exposedPort);
      // As an orchestrator does, the probe is polled: readiness waits for a live leader, which a busy machine may take a moment to elect.
      await waitFor(async () => ((await fetch(`${kairos.url}${url![2]}`)).status === 200 ? true : undefined), `${name}'s probe ${url![2]} to answer 200`);
      expect(service.healthcheck.interval).toBeDefined();
    }
  });

  it('the compose services start entry points of this build, after healthy Postgres and Redis, with auth required', () => {
    expect(compose.services.api.ports).toEqual([`${exposedPort}:${exposedPort}`]);
    expect(compose.services.scheduler.deploy.replicas).toBeGreaterThanOrEqual(2);
    for (const name of KAIROS_SERVICES) {
      const service = compose.services[name];
      expect(service.build).toBe('.');
      checkCommand(service.command, name);
      expect(service.depends_on).toEqual({
        postgres: { condition: 'service_healthy' },
        redis: { condition: 'service_healthy' },
        pgbouncer: { condition: 'service_started', required: false },
      });
      expect(service.environment.KAIROS_AUTH).toBe('required');
      for (const variable of Object.keys(service.environment)) expect(variables, `${name}: ${variable}`).toContain(variable);
      expect(() => loadConfig(interpolated(service.environment))).not.toThrow();
      expect(loadConfig(interpolated(service.environment)).databaseDirectUrl).toBe(loadConfig(interpolated(service.environment)).databaseUrl);
    }
    expect(compose.services.postgres.healthcheck).toBeDefined();
    expect(compose.services.redis.healthcheck).toBeDefined();
  });

  it('the pgbouncer profile puts PgBouncer in transaction mode in front of the postgres service, and Kairos keeps its sessions direct', () => {
    const pgbouncer = compose.services.pgbouncer;
    expect(pgbouncer.profiles).toEqual(['pgbouncer']);
    expect(pgbouncer.environment.POOL_MODE).toBe('transaction');
    const upstream = new URL(pgbouncer.environment.DATABASE_URL);
    expect(upstream.host).toBe('postgres:5432');
    const direct = interpolated(compose.services.api.environment).DATABASE_DIRECT_URL!;
    expect(new URL(direct).host).toBe('postgres:5432');
    // What the file's header tells a user to run: DATABASE_URL on the pooler's port.
    const pooled = new URL(upstream);
    pooled.host = `pgbouncer:${pgbouncer.environment.LISTEN_PORT}`;
    expect(read('docker-compose.yml')).toContain(`DATABASE_URL=${pooled} docker compose --profile pgbouncer up`);
    const config = loadConfig({ ...interpolated(compose.services.api.environment), DATABASE_URL: pooled.toString() });
    expect(describeDatabase(config)).toContain('through a transaction-mode pooler (sessions (presence locks, LISTEN) on postgres:5432/kairos)');
  });

  it('the image runs a Node.js line that CI starts the build on', () => {
    const images = [...dockerfile.matchAll(/^FROM node:(\d+)-\S+/gm)].map((m) => Number(m[1]));
    expect(images.length).toBeGreaterThanOrEqual(2);
    const smoked = [...read('.ci/run').matchAll(/for major in ([\d ]+); do/g)].flatMap((m) => m[1]!.trim().split(/\s+/).map(Number));
    for (const major of images) expect(smoked, `node:${major} in the Dockerfile`).toContain(major);
  });

  it('every process gets the same V8 heap budget, inside the memory the manifests request', () => {
    const budgetMb = Number(/^--max-old-space-size=(\d+)$/.exec(imageNodeOptions ?? '')?.[1]);
    expect(budgetMb, 'the Dockerfile sets ENV NODE_OPTIONS=--max-old-space-size=<MB>').toBeGreaterThan(0);
    expect(scripts.start).toMatch(new RegExp(`&& node ${imageNodeOptions} dist/apps/kairos/src/main\\.js$`));
    expect(dockerfile).toMatch(/^CMD \["node", "dist\/apps\/kairos\/src\/main\.js"\]$/m);
    // The heap is most of a process's memory, never all of it: code, buffers and sockets come on top.
    for (const role of KAIROS_SERVICES) {
      const container = deployment(role).spec.template.spec.containers[0];
      expect(Number(/^(\d+)Mi$/.exec(container.resources.requests.memory)?.[1]), role).toBeGreaterThan(budgetMb);
    }
  });

  it('Redis never evicts and keeps an append-only file', () => {
    const command = (compose.services.redis.command as string[]).join(' ');
    expect(command).toMatch(/--maxmemory-policy noeviction\b/);
    expect(command).toMatch(/--appendonly yes\b/);
    expect(compose.services.redis.volumes).toEqual(expect.arrayContaining([expect.stringMatching(/:\/data$/)]));
  });

  it('Kubernetes: api and worker Deployments, two schedulers, probes on served paths, config from a Secret', async () => {
    const configMaps = new Map(byKind('ConfigMap').map((c) => [c.metadata.name, c]));
    const secrets = new Map(byKind('Secret').map((s) => [s.metadata.name, s]));
    expect(deployment('scheduler').spec.replicas).toBe(2);
    const images = new Set<string>();
    for (const role of KAIROS_SERVICES) {
      const d = deployment(role);
      expect(d, role).toBeDefined();
      expect(matches(d.spec.selector.matchLabels, d.spec.template.metadata.labels)).toBe(true);
      const [container] = d.spec.template.spec.containers;
      images.add(container.image);
      checkCommand(container.command, role);
      const port = container.ports.find((p: any) => p.name === 'http');
      expect(port.containerPort).toBe(exposedPort);
      for (const probe of [container.livenessProbe, container.readinessProbe]) {
        expect(probe.httpGet.port).toBe('http');
        expect((await fetch(`${kairos.url}${probe.httpGet.path}`)).status, `${role} probes ${probe.httpGet.path}`).toBe(200);
      }
      const env: Record<string, string> = {};
      for (const source of container.envFrom) {
        if (source.configMapRef) Object.assign(env, configMaps.get(source.configMapRef.name)?.data ?? expect.fail(`no ConfigMap ${source.configMapRef.name}`));
        if (source.secretRef) Object.assign(env, secrets.get(source.secretRef.name)?.stringData ?? expect.fail(`no Secret ${source.secretRef.name}`));
      }
      for (const { name, value } of container.env ?? []) env[name] = value;
      for (const variable of Object.keys(env)) expect(variables, `${role}: ${variable}`).toContain(variable);
      expect(env).toMatchObject({ KAIROS_AUTH: 'required', PORT: String(exposedPort) });
      expect(Object.keys(secrets.get('kairos-connections').stringData).sort()).toEqual(['DATABASE_URL', 'REDIS_URL']);
      expect(() => loadConfig(env)).not.toThrow();
    }
    expect(images.size).toBe(1);
    // A worker's pod outlives its shutdown grace, or Kubernetes kills runs it was handing back.
    const worker = deployment('worker').spec.template.spec;
    const grace = loadConfig(Object.fromEntries(worker.containers[0].env.map((e: any) => [e.name, e.value]))).shutdownGraceMs;
    expect(worker.terminationGracePeriodSeconds * 1000).toBeGreaterThan(grace);
  });

  it('Kubernetes: the Service reaches the api pods, and budgets cover every role', () => {
    const [service] = byKind('Service');
    const api = deployment('api');
    expect(matches(service.spec.selector, api.spec.template.metadata.labels)).toBe(true);
    expect(service.spec.ports[0].targetPort).toBe('http');
    const budgets = byKind('PodDisruptionBudget');
    for (const role of KAIROS_SERVICES) {
      const d = deployment(role);
      const budget = budgets.find((b) => matches(b.spec.selector.matchLabels, d.spec.template.metadata.labels));
      expect(budget, `a PodDisruptionBudget for ${role}`).toBeDefined();
    }
    expect(budgets.find((b) => b.metadata.name === 'kairos-scheduler').spec.minAvailable).toBe(1);
  });
});
