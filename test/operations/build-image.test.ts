// SLOW (minutes: a full `npm ci`, a TypeScript build and a production `npm ci`, all from the local npm cache).
// The Dockerfile's install and build steps replayed in a temporary directory, without Docker: each stage's COPY
// and npm commands as the Dockerfile lists them, with a PATH that holds node, npm and sh only (no gcc, g++, cc,
// make or python, so a native module that needed compiling would fail here as in the image). Then the runtime stage's
// node_modules must hold no test package, and the compiled launcher, admin, proxy and CLI must run from it.
import { type ChildProcess, spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { delimiter, isAbsolute, join, posix } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import test from 'ava';
import { type Stage, commandsOf, copyOf, envOf, parseDockerfile } from '../support/dockerfile.js';
import { freePort } from '../support/ports.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/**
 * Packages the tests, the benchmarks and the build use: none may reach the production tree. Not express nor hono,
 * though the test merchants use express: the MCP SDK (a production dependency, the /mcp endpoint) depends on both,
 * and its Node transport runs on @hono/node-server.
 */
const TEST_PACKAGES = [
  'ava',
  'mppx',
  'typescript',
  'tsx',
  'esbuild',
  'x402',
  'x402-express',
  'playwright-core',
  'fast-check',
  'solc',
  'openid-client',
  'autocannon',
];
const TEST_SCOPES = ['@x402', '@biomejs', '@foundry-rs'];

/** Bounds a hung command only: a cold install on a loaded machine takes minutes. */
const COMMAND_LIMIT_MS = 8 * 60_000;

interface Output {
  code: number | null;
  out: string;
}

function run(cmd: string, args: string[], cwd: string, env: Record<string, string>): Promise<Output> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    const keep = (d: Buffer) => {
      out = (out + d.toString()).slice(-20_000);
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    const timer = setTimeout(() => child.kill('SIGKILL'), COMMAND_LIMIT_MS);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, out });
    });
  });
}

/** The npm the machine runs (its CLI script, which starts with `#!/usr/bin/env node`). */
function npmCli(): string {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    const candidate = join(dir, 'npm');
    if (dir !== '' && existsSync(candidate)) return realpathSync(candidate);
  }
  throw new Error('npm is not on the PATH');
}

/**
 * A directory holding `node`, `npm` and `sh` and nothing else: the whole PATH of the replayed steps (npm runs
 * install scripts with `sh`; the ones in this tree call nothing but node programs).
 */
function bareBin(dir: string, npm: string): string {
  mkdirSync(dir, { recursive: true });
  symlinkSync(process.execPath, join(dir, 'node'));
  symlinkSync(npm, join(dir, 'npm'));
  symlinkSync('/bin/sh', join(dir, 'sh'));
  return dir;
}

/** A clean environment: none of the npm_* variables of an `npm test` that started this test. */
function baseEnv(bin: string): Record<string, string> {
  return {
    PATH: bin,
    HOME: process.env.HOME ?? homedir(),
    LANG: 'C.UTF-8',
    // The machine's cache: the registry is reachable, but a warm cache keeps this to minutes.
    npm_config_prefer_offline: 'true',
    npm_config_update_notifier: 'false',
  };
}

/** Every package directory under node_modules, nested ones included: `name` or `@scope/name`. */
function installedPackages(nodeModules: string): string[] {
  const found: string[] = [];
  const walk = (dir: string): void => {
    if (!existsSync(dir)) return;
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (!entry.isDirectory() || entry.name.startsWith('.')) continue;
      const names = entry.name.startsWith('@')
        ? readdirSync(join(dir, entry.name), { withFileTypes: true })
            .filter((e) => e.isDirectory())
            .map((e) => `${entry.name}/${e.name}`)
        : [entry.name];
      for (const name of names) {
        found.push(name);
        walk(join(dir, name, 'node_modules'));
      }
    }
  };
  walk(nodeModules);
  return found;
}

async function waitHealthy(url: string, child: ChildProcess, log: () => string): Promise<void> {
  const until = Date.now() + 120_000;
  while (Date.now() < until) {
    if (child.exitCode !== null) throw new Error(`launcher exited early:\n${log()}`);
    try {
      if ((await fetch(`${url}/healthz`)).status === 200) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`${url} not healthy:\n${log()}`);
}

interface Replayed {
  /** The stage's WORKDIR, as a directory here. */
  dir: string;
  workdir: string;
  /** What each replayed command printed, for a failure's message. */
  log: string[];
}

/** Maps a path of the stage's filesystem (absolute, or relative to its WORKDIR) into `dir`. */
function inStage(r: { dir: string; workdir: string }, p: string): string {
  const rel = isAbsolute(p) ? posix.relative(r.workdir, p) : p;
  if (rel.startsWith('..')) throw new Error(`${p} is outside the WORKDIR ${r.workdir}`);
  return join(r.dir, rel);
}

/**
 * Runs one stage's COPY, ENV and RUN instructions. Of the RUN commands only npm's are replayed; the others act on
 * the container's own filesystem or size and are named here, so an unknown one fails the test instead of being
 * left out silently.
 */
async function replay(
  stage: Stage,
  dir: string,
  stages: Map<string, Replayed>,
  bin: string,
  npm: { version: string },
): Promise<Replayed> {
  const r: Replayed = { dir, workdir: '/', log: [] };
  const env = baseEnv(bin);
  mkdirSync(dir, { recursive: true });
  for (const { keyword, args } of stage.instructions) {
    if (keyword === 'WORKDIR') r.workdir = args;
    else if (keyword === 'ENV') Object.assign(env, envOf(args));
    else if (keyword === 'COPY') {
      const copy = copyOf(args);
      const from = copy.from === undefined ? undefined : stages.get(copy.from);
      if (copy.from !== undefined && from === undefined) throw new Error(`COPY --from=${copy.from}: no such stage`);
      for (const src of copy.sources) {
        const source = from === undefined ? join(ROOT, src) : inStage(from, src);
        const dest = copy.dest.endsWith('/') ? join(inStage(r, copy.dest), posix.basename(src)) : inStage(r, copy.dest);
        cpSync(source, dest, { recursive: true });
      }
    } else if (keyword === 'RUN') {
      for (const command of commandsOf(args)) {
        const pin = /^npm install -g npm@(\S+)/.exec(command);
        if (pin !== null) {
          if (pin[1] !== npm.version) throw new Error(`the image pins npm ${pin[1]}; this machine runs ${npm.version}`);
          continue;
        }
        if (command === 'npm cache clean --force') continue; // trims the image; here it would empty the machine's cache
        if (command === 'mkdir -p /app/data' || command.startsWith('chown ')) continue; // the container's filesystem
        if (!/^npm (ci|run) /.test(command)) throw new Error(`RUN ${command}: this test does not replay it; teach it`);
        const out = await run('npm', command.split(/\s+/).slice(1), r.dir, env);
        r.log.push(`$ ${command} (exit ${out.code})\n${out.out}`);
        if (out.code !== 0) throw new Error(`${stage.name}: ${command} failed:\n${out.out}`);
      }
    }
    // USER, VOLUME, EXPOSE, HEALTHCHECK, ENTRYPOINT, CMD describe the container, not its files.
  }
  return r;
}

test('SLOW: the image build, replayed without Docker and without a compiler: the runtime tree has no test package, and the compiled service runs from it', async (t) => {
  // At most the run's own timeout (ava.config.js): a longer t.timeout would make ava ignore a hang elsewhere for as long.
  t.timeout(10 * 60_000);
  const tmp = mkdtempSync(join(tmpdir(), 'payroute-image-'));
  const children: ChildProcess[] = [];
  try {
    const npm = npmCli();
    const bin = bareBin(join(tmp, 'bin'), npm);
    const version = (await run('npm', ['--version'], tmp, baseEnv(bin))).out.trim();
    const stages = parseDockerfile();
    t.deepEqual(
      stages.map((s) => s.name),
      ['build', 'runtime'],
    );
    const replayed = new Map<string, Replayed>();
    for (const stage of stages) {
      replayed.set(stage.name, await replay(stage, join(tmp, stage.name), replayed, bin, { version }));
    }
    const runtime = replayed.get('runtime');
    if (runtime === undefined) throw new Error('no runtime stage');
    const app = runtime.dir;

    // No test package anywhere in the production tree (nested copies included), and what the service needs is there.
    const installed = installedPackages(join(app, 'node_modules'));
    const leaked = installed.filter(
      (name) => TEST_PACKAGES.includes(name) || TEST_SCOPES.some((scope) => name.startsWith(`${scope}/`)),
    );
    t.deepEqual([...new Set(leaked)].sort(), [], runtime.log.join('\n'));
    for (const needed of [
      'koa',
      '@mikro-orm/core',
      '@mikro-orm/sqlite',
      'better-sqlite3',
      'pg',
      'secp256k1',
      'viem',
      '@modelcontextprotocol/sdk',
    ]) {
      t.true(installed.includes(needed), `${needed} is installed`);
    }
    t.false(existsSync(join(app, 'node_modules/.bin/tsc')), 'no compiler in the runtime tree');
    t.true(existsSync(join(app, 'dist/admin/cli/container.js')), 'the compiled entry point');

    // The native modules load without a compiler having run: better-sqlite3 from the build in its package;
    // secp256k1 from its own, or its pure-JS fallback on a platform it carries none for.
    const native = await run(
      'node',
      [
        '-e',
        "const D=require('better-sqlite3');const db=new D(':memory:');" +
          "process.stdout.write(String(db.prepare('select 40+2 as x').get().x));db.close();" +
          "let kind='native';try{require('secp256k1/bindings')}catch{kind='js'}" +
          "const s=require('secp256k1');process.stdout.write(' '+kind+' '+s.privateKeyVerify(Buffer.alloc(32,1)))",
      ],
      app,
      baseEnv(bin),
    );
    t.is(native.code, 0, native.out);
    t.regex(native.out, /^42 (native|js) true$/);
    t.log(`secp256k1: ${native.out.split(' ')[1]} build`);

    // The compiled launcher (what `npm start` runs) starts the compiled admin and proxy from this tree alone.
    const [adminPort, proxyPort] = [await freePort(), await freePort()];
    const serviceEnv = {
      ...baseEnv(bin),
      NODE_ENV: 'production',
      HOST: '127.0.0.1',
      ADMIN_PORT: String(adminPort),
      PROXY_PORT: String(proxyPort),
      DATA_DIR: join(tmp, 'data'),
      LOG_LEVEL: 'warn',
    };
    const launcher = spawn('node', ['dist/admin/cli/start.js'], {
      cwd: app,
      env: serviceEnv,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(launcher);
    const lines: string[] = [];
    for (const stream of [launcher.stdout, launcher.stderr]) {
      createInterface({ input: stream }).on('line', (l) => lines.push(l));
    }
    const log = () => lines.join('\n');
    const exited = new Promise<number | null>((resolve) => launcher.on('exit', (code) => resolve(code)));
    await Promise.all([
      waitHealthy(`http://127.0.0.1:${adminPort}`, launcher, log),
      waitHealthy(`http://127.0.0.1:${proxyPort}`, launcher, log),
    ]);
    // A route of the admin process, through the proxy's forwarding.
    const jwks = await fetch(`http://127.0.0.1:${proxyPort}/.well-known/jwks.json`);
    t.is(jwks.status, 200);
    const body = (await jwks.json()) as { keys?: unknown };
    t.true(Array.isArray(body.keys) && body.keys.length > 0, JSON.stringify(body));
    // The MCP endpoint, on the SDK from the production tree: without a token, the challenge naming its metadata.
    const mcp = await fetch(`http://127.0.0.1:${proxyPort}/mcp`, { method: 'POST' });
    t.is(mcp.status, 401);
    t.regex(mcp.headers.get('www-authenticate') ?? '', /oauth-protected-resource\/mcp"/);

    // The image's entry point, in its cli and migrate roles, on the same database.
    const created = await run(
      'node',
      ['dist/admin/cli/container.js', 'cli', 'users', 'create', '--email', 'image@example.test'],
      app,
      serviceEnv,
    );
    t.is(created.code, 0, created.out);
    t.regex(created.out, /"email":"image@example\.test"/);
    const status = await run('node', ['dist/admin/cli/container.js', 'migrate', 'status'], app, serviceEnv);
    t.is(status.code, 0, status.out);
    t.regex(status.out, /"pending":\[\]/);

    launcher.kill('SIGTERM');
    t.is(await exited, 0, log());
  } finally {
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    rmSync(tmp, { recursive: true, force: true });
  }
});
