// `npm run build` (and `npm start` before it starts): compiles config/, shared/, admin/ and proxy/ into dist/ with
// tsconfig.build.json, only when a source changed since the last build (tsc's build mode compares them with
// dist/.tsbuildinfo, so an up-to-date tree costs a fraction of a second).
// Every output file is written to a temporary name and renamed into place: a process already loading dist/ (a
// second `npm start` launched while this one rebuilds) reads either the old file or the new one, never half of one.
// Node runs this file itself (type stripping, Node 22.18 and later), without tsx.
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire, enableCompileCache } from 'node:module';
import { fileURLToPath } from 'node:url';
import type ts from 'typescript';

// The compiler is 9 MB of CommonJS: required (an ESM import would first scan it for its exports), from V8's code
// cache after the first time (as tsc itself does).
enableCompileCache();
const typescript = createRequire(import.meta.url)('typescript') as typeof ts;

const root = fileURLToPath(new URL('../../', import.meta.url));

function writeAtomically(path: string, data: string, writeByteOrderMark?: boolean): void {
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, writeByteOrderMark === true ? `\ufeff${data}` : data);
  renameSync(tmp, path);
}

const system: ts.System = { ...typescript.sys, writeFile: writeAtomically };
// Diagnostics and build status go to the compiler's own reporters, as `tsc -b` prints them.
const host = typescript.createSolutionBuilderHost(system);
const builder = typescript.createSolutionBuilder(host, [`${root}tsconfig.build.json`], {});
process.exitCode = builder.build() === typescript.ExitStatus.Success ? 0 : 1;

// The reference page's renderer (GET /docs/rapidoc-min.js): RapiDoc is a development dependency, whose large
// dependency tree exists only to make this one bundle, so the image carries the bundle in dist/assets/ instead.
const require = createRequire(import.meta.url);
mkdirSync(`${root}dist/assets`, { recursive: true });
writeAtomically(
  `${root}dist/assets/rapidoc-min.js`,
  readFileSync(require.resolve('rapidoc/dist/rapidoc-min.js'), 'utf8'),
);
