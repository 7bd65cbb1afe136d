// The load-test kit end to end, as an operator runs it: `npm run loadtest -- relay --duration 3` (the same module and
// arguments, on free ports instead of the fixed ones) writes its report and exits 0, and `npm run loadtest:stack`
// prints an environment that works for the k6 scripts' requests and stops on SIGINT. Neither leaves a process
// listening on its ports (each can be bound again).
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { type AddressInfo, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import test from 'ava';
import { LoadReportSchema } from '../../loadtest/report.js';
import { assertPortsFree } from '../../loadtest/world.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** Ports free right now (all four held at once, so they differ), for the kit's port flags. */
async function freePorts(n: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from(
      { length: n },
      () =>
        new Promise<ReturnType<typeof createServer>>((resolve) => {
          const s = createServer();
          s.listen(0, '127.0.0.1', () => resolve(s));
        }),
    ),
  );
  const ports = servers.map((s) => (s.address() as AddressInfo).port);
  await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
  return ports;
}

interface Ran {
  readonly child: ChildProcess;
  readonly out: () => string;
  readonly err: () => string;
  readonly exit: Promise<number | null>;
}

/** `node --import tsx <entry> ...args` in the repository, as the npm scripts run it, without any LOADTEST_* set. */
function run(entry: string, args: string[]): Ran {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('LOADTEST_')));
  const child = spawn(process.execPath, ['--import', 'tsx', entry, ...args], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout?.on('data', (d: Buffer) => {
    out += d.toString();
  });
  child.stderr?.on('data', (d: Buffer) => {
    err += d.toString();
  });
  const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, out: () => out, err: () => err, exit };
}

/** The ports as the kit takes them: proxy, admin, upstream, merchant. */
const asPorts = ([proxy = 0, admin = 0, upstream = 0, merchant = 0]: number[]) => ({
  proxy,
  admin,
  upstream,
  merchant,
});

const portFlags = ([proxy, admin, upstream, merchant]: number[]) => [
  '--proxy-port',
  String(proxy),
  '--admin-port',
  String(admin),
  '--upstream-port',
  String(upstream),
  '--merchant-port',
  String(merchant),
];

test.serial(
  'loadtest relay --duration 3: exits 0, writes the HTML and JSON it names, leaves no port open',
  async (t) => {
    const ports = await freePorts(4);
    const out = mkdtempSync(join(tmpdir(), 'loadtest-e2e-'));
    try {
      const r = run('loadtest/run.ts', ['relay', '--duration', '3', '--out', out, ...portFlags(ports)]);
      const code = await r.exit;
      t.is(code, 0, `stdout:\n${r.out()}\nstderr:\n${r.err()}`);
      const html = /^report: +(.+\.html)$/m.exec(r.out())?.[1];
      const json = /^figures: +(.+\.json)$/m.exec(r.out())?.[1];
      if (html === undefined || json === undefined) return t.fail(`no paths in:\n${r.out()}`);
      const at = (p: string) => (p.startsWith('/') ? p : join(ROOT, p));
      t.true(existsSync(at(html)));
      t.regex(html, /relay-\d{8}T\d{6}Z\.html$/);
      const report = LoadReportSchema.parse(JSON.parse(readFileSync(at(json), 'utf8')));
      t.like(report, {
        scenario: 'relay',
        interrupted: false,
        passed: true,
        summary: { failed: 0 },
        settings: { durationSeconds: 3, connections: 32, db: 'sqlite', endpoints: { proxy: `127.0.0.1:${ports[0]}` } },
        errors: [],
      });
      t.true(report.summary.ok > 0);
      t.is(report.summary.requests, report.summary.ok);
      t.is(
        report.perSecond.reduce((a, s) => a + s.ok, 0),
        report.summary.ok,
      );
      const page = readFileSync(at(html), 'utf8');
      t.is(page.split('<svg class="chart"').length - 1, 2);
      t.notRegex(page, /https?:\/\//);
      // The live progress line (a plain line off a terminal) and the summary line.
      t.regex(r.err(), /^relay \d+\/3 s \| [\d,]+ done \| [\d,]+\/s \| p50 [\d.,]+ ms \| p99 [\d.,]+ ms \| 0 errors$/m);
      t.regex(r.out(), /^relay: [\d,]+ calls in [\d.]+ s, .* 0 failed: PASS$/m);
      await t.notThrowsAsync(assertPortsFree(asPorts(ports)));
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  },
);

test.serial('loadtest:stack prints an environment the k6 requests work with; SIGINT stops it all', async (t) => {
  const ports = await freePorts(4);
  const r = run('loadtest/serve-stack.ts', portFlags(ports));
  let code: number | null;
  try {
    const printed = await new Promise<string>((resolve, reject) => {
      const check = setInterval(() => {
        if (r.out().includes('# Ctrl-C stops')) {
          clearInterval(check);
          resolve(r.out());
        }
      }, 200);
      void r.exit.then((code) => {
        clearInterval(check);
        reject(new Error(`loadtest:stack exited with ${code}:\n${r.err()}`));
      });
    });
    const env = Object.fromEntries(
      [...printed.matchAll(/^export ([A-Z_]+)=(\S+)$/gm)].map((m) => [m[1] ?? '', m[2] ?? '']),
    );
    t.deepEqual(Object.keys(env), [
      'BASE_URL',
      'API_KEY',
      'DELEGATION_ID',
      'TARGET_URL',
      'PAID_URL',
      'TOKEN',
      'CLIENT_ID',
      'REDIRECT_URI',
    ]);
    t.is(env.BASE_URL, `http://127.0.0.1:${ports[0]}`);
    t.is(env.TARGET_URL, `http://127.0.0.1:${ports[2]}/free`);
    t.is(env.PAID_URL, `http://127.0.0.1:${ports[3]}/paid`);
    for (const s of ['relay', 'paid', 'mint', 'commerce']) {
      t.regex(printed, new RegExp(`^k6 run (-e [A-Z_]+=\\S+ )+loadtest/k6/${s}\\.ts$`, 'm'));
    }
    // The requests of loadtest/k6/relay.ts, paid.ts and commerce.ts, with what was printed.
    const relay = await fetch(`${env.BASE_URL}/api/v1/router/proxy`, {
      headers: {
        authorization: `Bearer ${env.API_KEY}`,
        'x-router-target-url': env.TARGET_URL ?? '',
        'x-router-delegation-id': env.DELEGATION_ID ?? '',
        'x-router-request-id': 'e2e-relay-1',
      },
    });
    t.is(relay.status, 200);
    t.deepEqual(await relay.json(), { free: true, answer: 42, note: 'a small free JSON answer' });
    const route = async (path: string, bearer: string, body: Record<string, string>) => {
      const res = await fetch(`${env.BASE_URL}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json' },
        body: JSON.stringify({ ...body, url: env.PAID_URL, method: 'GET' }),
      });
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    };
    const paid = await route('/api/v1/router/route', env.API_KEY ?? '', {
      requestId: 'e2e-paid-1',
      delegationId: env.DELEGATION_ID ?? '',
    });
    t.is(paid.status, 200);
    t.like(paid.body, { status: 200, paid: true, payment: { status: 'Settled' } });
    const commerce = await route('/api/v1/router/commerce/route', env.TOKEN ?? '', { requestId: 'e2e-commerce-1' });
    t.is(commerce.status, 200);
    t.like(commerce.body, { status: 200, paid: true, payment: { status: 'Settled' } });
  } finally {
    r.child.kill('SIGINT');
    code = await r.exit;
  }
  t.is(code, 0, r.err());
  await t.notThrowsAsync(assertPortsFree(asPorts(ports)));
});
