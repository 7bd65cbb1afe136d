// The build: tsconfig.build.json compiles the production code (config/, shared/, admin/, proxy/) and nothing else,
// every npm script and the image's entry point run a file it emits, tsx and the test packages are devDependencies,
// and the Dockerfile keeps the shape test/operations/build-image.test.ts replays (a build stage, a runtime stage with the
// production install, a pinned npm, a non-root user, a readiness health check).
import { execFile } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import test from 'ava';
import { z } from 'zod';
import { commandsOf, copyOf, parseDockerfile } from '../support/dockerfile.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const PRODUCTION_DIRS = ['config', 'shared', 'admin', 'proxy'];
/** Developer tools under admin/cli that import devDependencies: run from the sources with tsx or node, never built. */
const DEV_TOOLS = ['admin/cli/build.ts', 'admin/cli/make-migration.ts', 'admin/cli/gen-error-docs.ts'];

const PackageJson = z.object({
  dependencies: z.record(z.string(), z.string()),
  devDependencies: z.record(z.string(), z.string()),
  scripts: z.record(z.string(), z.string()),
});
const pkg = PackageJson.parse(JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')));

function tsFilesUnder(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts'))
    .map((e) => relative(ROOT, join(e.parentPath, e.name)).split(sep).join('/'));
}

/** The project files tsc compiles with tsconfig.build.json (its own answer, without building). */
async function listBuildInputs(): Promise<string[]> {
  const tsc = join(ROOT, 'node_modules/typescript/bin/tsc');
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [tsc, '-p', 'tsconfig.build.json', '--listFilesOnly'],
    {
      cwd: ROOT,
      maxBuffer: 64 * 1024 * 1024,
    },
  );
  return stdout
    .split('\n')
    .map((f) => f.trim())
    .filter((f) => f !== '' && !f.includes('/node_modules/'))
    .map((f) => relative(ROOT, f).split(sep).join('/'))
    .sort();
}

// Asked once for the file: listing them resolves and parses the whole program.
let inputs: Promise<string[]> | undefined;
const buildInputs = (): Promise<string[]> => {
  inputs ??= listBuildInputs();
  return inputs;
};

test('tsconfig.build.json compiles every production file and nothing else (no test, loadtest, contracts or dev tool)', async (t) => {
  const inputs = await buildInputs();
  const expected = PRODUCTION_DIRS.flatMap(tsFilesUnder)
    .filter((f) => !DEV_TOOLS.includes(f))
    .sort();
  t.deepEqual(inputs, expected);
  for (const entry of ['admin/server.ts', 'proxy/server.ts', 'admin/cli/start.ts', 'admin/cli/container.ts']) {
    t.true(inputs.includes(entry), entry);
  }
});

test('every npm script and the image entry point that run dist/ run a file the build emits', async (t) => {
  const inputs = new Set(await buildInputs());
  const targets = [
    ...Object.values(pkg.scripts),
    ...parseDockerfile()
      .flatMap((s) => s.instructions)
      .filter((i) => i.keyword === 'ENTRYPOINT')
      .map((i) => i.args),
  ].flatMap((s) => [...s.matchAll(/dist\/(\S+?)\.js/g)].map((m) => `${m[1]}.ts`));
  t.true(targets.length >= 6, targets.join(', '));
  for (const source of targets) t.true(inputs.has(source), `${source} is compiled into dist/`);
  // The production entry points run compiled JavaScript, and `npm start` builds first when dist/ is stale.
  for (const name of ['start', 'start:admin', 'start:proxy', 'cli', 'db:migrate']) {
    t.regex(pkg.scripts[name] ?? '', /^(exec )?node --env-file-if-exists=\.env dist\/\S+\.js$/, name);
  }
  t.is(pkg.scripts.prestart, pkg.scripts.build);
  t.is(pkg.scripts.build, 'node admin/cli/build.ts');
});

test('tsx, the compiler and the test packages are devDependencies only', (t) => {
  for (const name of ['tsx', 'typescript', 'ava', 'mppx', 'express', 'x402', 'playwright-core', 'fast-check', 'solc']) {
    t.false(name in pkg.dependencies, `${name} is not a production dependency`);
    t.true(name in pkg.devDependencies, `${name} is a devDependency`);
  }
});

test('Dockerfile: a build stage that compiles, a runtime stage with the production install, pinned, non-root, /readyz', (t) => {
  const stages = parseDockerfile();
  const [build, runtime] = stages;
  if (build === undefined || runtime === undefined) return t.fail('two stages');
  t.is(stages.length, 2);
  const runs = (s: typeof build) =>
    s.instructions.filter((i) => i.keyword === 'RUN').flatMap((i) => commandsOf(i.args));
  for (const stage of stages) {
    // The same exact Node and npm in both stages: the lockfile's meaning is npm's.
    t.regex(stage.image, /^node:\d+\.\d+\.\d+-slim$/, `${stage.name} base image pinned`);
    t.true(
      runs(stage).some((c) => /^npm install -g npm@\d+\.\d+\.\d+ /.test(c)),
      `${stage.name} pins npm`,
    );
  }
  t.is(build.image, runtime.image);
  t.true(runs(build).includes('npm ci --ignore-scripts --no-audit --no-fund'));
  t.true(runs(build).includes('npm run build'));
  t.true(runs(runtime).includes('npm ci --omit=dev --omit=optional --ignore-scripts --no-audit --no-fund'));
  t.false(
    runs(runtime).some((c) => c.startsWith('npm run')),
    'nothing is built in the runtime stage',
  );
  // The runtime stage takes the lockfile and the compiled code, never the sources.
  const copies = runtime.instructions.filter((i) => i.keyword === 'COPY').map((i) => copyOf(i.args));
  t.deepEqual(copies, [
    { from: undefined, sources: ['package.json', 'package-lock.json'], dest: './' },
    { from: 'build', sources: ['/app/dist'], dest: './dist' },
  ]);
  const last = (keyword: string) => runtime.instructions.filter((i) => i.keyword === keyword).at(-1)?.args ?? '';
  t.is(last('USER'), 'node');
  t.regex(last('HEALTHCHECK'), /\/readyz/);
  t.is(last('ENTRYPOINT'), '["node", "dist/admin/cli/container.js"]');
  t.is(last('CMD'), '["admin"]');
});
