// `npm run build` (and `npm start` before it starts): compiles config/, shared/, admin/ and proxy/ into dist/ with
// tsconfig.build.json, only when a source changed since the last build (tsc's build mode compares them with
// dist/.tsbuildinfo, so an up-to-date tree costs a fraction of a second).
// Every output file is written to a temporary name and renamed into place: a process already loading dist/ (a
// second `npm start` launched while this one rebuilds) reads either the old file or the new one, never half of one.
// Node runs this file itself (type stripping, Node 22.18 and later), without tsx.
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire, enableCompileCache } from 'node:module';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import type ts from 'typescript';

// The compiler is 9 MB of CommonJS: required (an ESM import would first scan it for its exports), from V8's code
// cache after the first time (as tsc itself does).
enableCompileCache();
const typescript = createRequire(import.meta.url)('typescript') as typeof ts;

const root = fileURLToPath(new URL('../../', import.meta.url));
/** The project to build: the service's, or another tsconfig (the build's own tests build a small one). */
const tsconfig = process.argv[2] ?? `${root}tsconfig.build.json`;
const outRoot = `${dirname(tsconfig)}/`;

function writeAtomically(path: string, data: string, writeByteOrderMark?: boolean): void {
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, writeByteOrderMark === true ? `\ufeff${data}` : data);
  renameSync(tmp, path);
}

/**
 * What a first build is doing, on stderr: it takes about a minute on two cores, and a silent minute reads as a hang.
 * Each tenth of the files checked is one line (a log, not a redrawn bar: it reads the same in a terminal,
 * in `docker build` and in a CI log). An up-to-date tree prints nothing.
 */
const progress = {
  total: 0,
  written: 0,
  shown: 0,
  started: Date.now(),
  begin(total: number): void {
    this.total = total;
    process.stderr.write(
      `build: compiling ${total} TypeScript files into dist/ (a first build takes about a minute; later builds redo only what changed)\n`,
    );
  },
  step(): void {
    if (this.total === 0) return;
    this.written += 1;
    const tenth = Math.floor((this.written * 10) / this.total);
    if (tenth > this.shown && tenth < 10) {
      this.shown = tenth;
      process.stderr.write(
        `build: checked ${tenth * 10}% (${this.written} of ${this.total} files, ${this.elapsed()} s)\n`,
      );
    }
  },
  elapsed(): number {
    return Math.round((Date.now() - this.started) / 1000);
  },
  end(ok: boolean): void {
    if (this.total === 0) return;
    const secs = this.elapsed();
    process.stderr.write(ok ? `build: done in ${secs} s\n` : `build: failed after ${secs} s (the errors are above)\n`);
  },
};

const system: ts.System = { ...typescript.sys, writeFile: writeAtomically };
// Diagnostics and build status go to the compiler's own reporters, as `tsc -b` prints them.
const host = typescript.createSolutionBuilderHost(system);
const builder = typescript.createSolutionBuilder(host, [tsconfig], {});
// One project: built step by step only to learn its size before it emits (the files tsc will write).
let ok = true;
for (
  let project = builder.getNextInvalidatedProject();
  project !== undefined;
  project = builder.getNextInvalidatedProject()
) {
  if (project.kind === typescript.InvalidatedProjectKind.Build) {
    const sources = new Set(project.getProgram()?.getRootFileNames() ?? []);
    progress.begin(sources.size);
    // Type checking is most of a build and happens before any file is written: checked file by file here (the
    // builder keeps each file's result, so done() reports them and does not check again), each of the project's
    // own files counted (the libraries' declaration files are checked too, first and fast).
    for (let r = project.getSemanticDiagnosticsOfNextAffectedFile(); r !== undefined; ) {
      if ('fileName' in r.affected && sources.has(r.affected.fileName)) progress.step();
      r = project.getSemanticDiagnosticsOfNextAffectedFile();
    }
  }
  if (project.done() !== typescript.ExitStatus.Success) ok = false;
}
progress.end(ok);
process.exitCode = ok ? 0 : 1;

// The reference page's renderer (GET /docs/rapidoc-min.js): RapiDoc is a development dependency, whose large
// dependency tree exists only to make this one bundle, so the image carries the bundle in dist/assets/ instead.
const require = createRequire(import.meta.url);
mkdirSync(`${outRoot}dist/assets`, { recursive: true });
writeAtomically(
  `${outRoot}dist/assets/rapidoc-min.js`,
  readFileSync(require.resolve('rapidoc/dist/rapidoc-min.js'), 'utf8'),
);
