// The build's progress report (admin/cli/build.ts): a first build says what it compiles and how far type checking
// is, by tenths, and when it is done; an up-to-date tree builds silently; a type error ends in a failure line and
// exit 1. Run on a small project of its own in a temporary directory (the same script, another tsconfig), so the
// test neither rebuilds the service nor touches its dist/.
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import test from 'ava';

const BUILD = fileURLToPath(new URL('../../admin/cli/build.ts', import.meta.url));
const FILES = 12;

/** `stdout` holds the compiler's diagnostics (its reporter writes there, as `tsc -b` does), `stderr` the progress. */
function build(tsconfig: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [BUILD, tsconfig], { timeout: 120_000 }, (err, stdout, stderr) => {
      const code = err === null ? 0 : typeof err.code === 'number' ? err.code : 1;
      resolve({ code, stdout, stderr });
    });
  });
}

function project(source: (i: number) => string): { dir: string; tsconfig: string } {
  const dir = mkdtempSync(join(tmpdir(), 'payroute-build-'));
  const tsconfig = join(dir, 'tsconfig.json');
  writeFileSync(
    tsconfig,
    JSON.stringify({
      compilerOptions: {
        target: 'es2022',
        module: 'nodenext',
        strict: true,
        outDir: 'dist',
        rootDir: '.',
        incremental: true,
        tsBuildInfoFile: 'dist/.tsbuildinfo',
        types: [],
      },
      include: ['src'],
    }),
  );
  mkdirSync(join(dir, 'src'));
  for (let i = 0; i < FILES; i += 1) writeFileSync(join(dir, 'src', `m${i}.ts`), source(i));
  return { dir, tsconfig };
}

test('a first build reports what it compiles, its progress by tenths and its end; an up-to-date build is silent', async (t) => {
  const { dir, tsconfig } = project((i) => `export const v${i}: number = ${i};\n`);
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const first = await build(tsconfig);
  t.is(first.code, 0, first.stderr);
  const lines = first.stderr.trim().split('\n');
  t.regex(lines[0] ?? '', new RegExp(`^build: compiling ${FILES} TypeScript files into dist/ `));
  const tenths = lines.filter((l) => l.startsWith('build: checked '));
  t.true(tenths.length >= 5, first.stderr);
  for (const l of tenths) t.regex(l, new RegExp(`^build: checked [1-9]0% \\(\\d+ of ${FILES} files, \\d+ s\\)$`));
  t.regex(lines.at(-1) ?? '', /^build: done in \d+ s$/);
  t.true(existsSync(join(dir, 'dist', 'src', 'm0.js')));
  const again = await build(tsconfig);
  t.is(again.code, 0);
  t.is(again.stderr, '');
  t.is(again.stdout, '');
});

test('a build with a type error names the error and ends with the failure line and exit 1', async (t) => {
  const { dir, tsconfig } = project((i) =>
    i === 3 ? 'export const broken: number = "text";\n' : `export const v${i} = ${i};\n`,
  );
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const r = await build(tsconfig);
  t.is(r.code, 1);
  t.regex(r.stdout, /m3\.ts/);
  t.regex(r.stdout, /TS2322/);
  t.regex(r.stderr.trim().split('\n').at(-1) ?? '', /^build: failed after \d+ s \(the errors are above\)$/);
});
