// docker-compose.yml, checked without a Docker engine: parsed as YAML, each payroute service's environment (with
// compose's ${VAR:-default} filled in) passes the configuration schema, the services start in order (database,
// migrations once, admin, proxies), DATABASE_URL names the database service's own credentials, and the proxies
// reach the admin service and publish one port per replica.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import test from 'ava';
import { z } from 'zod';
import { loadConfig } from '../../config/index.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
// js-yaml comes with ava (through supertap); the project itself has no YAML to read.
const { safeLoad } = createRequire(import.meta.url)('js-yaml') as { safeLoad(text: string): unknown };

const DependsOn = z.record(
  z.string(),
  z.object({ condition: z.enum(['service_started', 'service_healthy', 'service_completed_successfully']) }),
);
const Service = z.object({
  image: z.string(),
  build: z.string().optional(),
  command: z.array(z.string()).optional(),
  environment: z.record(z.string(), z.string()).optional(),
  depends_on: DependsOn.optional(),
  restart: z.string().optional(),
  ports: z.array(z.string()).optional(),
  deploy: z.object({ replicas: z.number().int().positive() }).optional(),
  healthcheck: z
    .object({ test: z.array(z.string()).optional() })
    .passthrough()
    .optional(),
  volumes: z.array(z.string()).optional(),
});
const Compose = z.object({
  name: z.string(),
  services: z.object({ db: Service, migrate: Service, admin: Service, proxy: Service }).strict(),
  volumes: z.record(z.string(), z.null()),
});

const compose = Compose.parse(safeLoad(readFileSync(`${ROOT}docker-compose.yml`, 'utf8')));
const { db, migrate, admin, proxy } = compose.services;

/** Compose's interpolation with nothing set but SECRETS_KEY: `${X:-d}` is d, `${X:?msg}` must be set. */
function interpolate(value: string, set: Record<string, string>): string {
  return value.replace(/\$\{(\w+)(?::([-?])([^}]*))?\}/g, (_m, name: string, op?: string, arg?: string) => {
    const v = set[name];
    if (v !== undefined) return v;
    if (op === '-') return arg ?? '';
    throw new Error(`${name} must be set: ${arg ?? ''}`);
  });
}

const SET = { SECRETS_KEY: 'k'.repeat(64) };
const envOf = (s: z.infer<typeof Service>) =>
  Object.fromEntries(Object.entries(s.environment ?? {}).map(([k, v]) => [k, interpolate(v, SET)]));

test('the payroute services run the one image in their roles, each with an environment the config schema accepts', (t) => {
  for (const [service, role] of [
    [migrate, 'migrate'],
    [admin, 'admin'],
    [proxy, 'proxy'],
  ] as const) {
    t.is(service.build, '.', role);
    t.is(service.image, 'payroute:local', role);
    t.deepEqual(service.command, [role]);
    const config = loadConfig({ ...envOf(service), DATA_DIR: '/app/data', HOST: '0.0.0.0' });
    t.is(config.database.kind, 'postgresql', role);
  }
  t.throws(() => interpolate(migrate.environment?.SECRETS_KEY ?? '', {}), { message: /SECRETS_KEY must be set/ });
});

test('DATABASE_URL names the db service with its own user, password and database', (t) => {
  const url = new URL(envOf(admin).DATABASE_URL ?? '');
  const pg = envOf(db);
  t.is(url.hostname, 'db');
  t.is(url.port, '5432');
  t.truthy(pg.POSTGRES_USER);
  t.deepEqual(
    [url.username, url.password, url.pathname],
    [pg.POSTGRES_USER, pg.POSTGRES_PASSWORD, `/${pg.POSTGRES_DB}`],
  );
  for (const s of [migrate, proxy]) t.is(envOf(s).DATABASE_URL, envOf(admin).DATABASE_URL);
  t.is(envOf(proxy).SECRETS_KEY, envOf(admin).SECRETS_KEY);
  t.is(envOf(proxy).PUBLIC_URL, envOf(admin).PUBLIC_URL);
  t.regex(db.image, /^postgres:\d+/);
  t.deepEqual(db.healthcheck?.test?.slice(0, 2), ['CMD', 'pg_isready']);
});

test('start order: database healthy, migrations once and done, admin healthy, then the proxies', (t) => {
  t.deepEqual(migrate.depends_on, { db: { condition: 'service_healthy' } });
  t.is(migrate.restart, 'no', 'the one-off migration is not restarted');
  t.deepEqual(admin.depends_on, { migrate: { condition: 'service_completed_successfully' } });
  t.deepEqual(proxy.depends_on, { admin: { condition: 'service_healthy' } });
});

test('the proxies: replicas forwarding to the admin service, one loopback host port per replica', (t) => {
  const replicas = proxy.deploy?.replicas ?? 1;
  t.true(replicas >= 2);
  t.is(envOf(proxy).ADMIN_URL, 'http://admin:3000');
  t.is(admin.ports, undefined, 'the admin port stays on the compose network');
  const [published] = proxy.ports ?? [];
  const m = /^127\.0\.0\.1:(\d+)-(\d+):3001$/.exec(published ?? '');
  if (m === null) return t.fail(`a loopback port range: ${published}`);
  t.is(Number(m[2]) - Number(m[1]) + 1, replicas);
});
