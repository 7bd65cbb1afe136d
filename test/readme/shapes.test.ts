// The README harness on its own: which blocks run, how an answer comment reads, what a printed value must be to
// match it, and the bash session that runs the blocks, on a README-like fixture (no service needed).
import { fileURLToPath } from 'node:url';
import test from 'ava';
import fc from 'fast-check';
import { assignedVariables, localize, runnableBlocks, unsafeCommands } from '../support/readme/blocks.js';
import { answerProblems, expectations, jsonValues, match, parseShape } from '../support/readme/shapes.js';
import { Shell } from '../support/readme/shell.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const RUNS = Math.max(100, Number(process.env.FUZZ_RUNS ?? 1000));
const shape = (text: string) => parseShape(text).shape;
const fence = '```';

const FIXTURE = [
  '# A README', //                                 1
  '', //                                           2
  `${fence}sh`, //                                 3
  'GREETING=hello', //                             4
  `echo '{"greeting":"'"$GREETING"'","n":1}'`, //  5
  '# {"greeting":"hello",...}', //                 6
  fence, //                                        7
  '', //                                           8
  '<!-- not run: needs a browser -->', //          9
  '', //                                           10
  `${fence}sh`, //                                 11
  'exit 1', //                                     12
  fence, //                                        13
  `${fence}console`, //                            14
  '$ false', //                                    15
  fence, //                                        16
  `${fence}${fence[0]}text`, //                    17: a four-backtick fence holding a ```sh
  `${fence}sh`, //                                 18
  'false', //                                      19
  fence, //                                        20
  `${fence}${fence[0]}`, //                        21
  `  ${fence}sh`, //                               22: inside a list item
  '  echo "$GREETING again" | cat', //             23
  "  printf '[1,\\n2]\\n' | false | true", //   24
  '  EMPTY=$(printf null)', //                     25
  `  ${fence}`, //                                 26
].join('\n');

test('blocks: only ```sh fences run, not-run ones and other languages are skipped, line numbers are 1-based', (t) => {
  const blocks = runnableBlocks(FIXTURE);
  t.deepEqual(
    blocks.map((b) => b.line),
    [4, 23],
  );
  t.is(blocks[1]?.text, 'echo "$GREETING again" | cat\nprintf \'[1,\\n2]\\n\' | false | true\nEMPTY=$(printf null)');
  t.is(runnableBlocks(`${fence}shell\nx\n${fence}\n${fence}sh title\ny\n${fence}\n${fence}\nz\n${fence}`).length, 0);
  // Prose between the marker and the fence un-marks it: the marker belongs to the nearest non-empty line.
  t.is(runnableBlocks(`<!-- not run: x -->\nprose\n\n${fence}sh\ntrue\n${fence}`).length, 1);
});

test('blocks: an unclosed fence and a not-run marker without reason are errors naming the line', (t) => {
  t.throws(() => runnableBlocks(`a\n${fence}sh\ntrue\n`), { message: /README line 2: .*never closed/ });
  t.throws(() => runnableBlocks(`<!-- not run -->\n${fence}sh\ntrue\n${fence}`), { message: /README line 1/ });
});

test('blocks: the literal origins become the test ports, and only those', (t) => {
  const text =
    'curl http://127.0.0.1:3001/x http://127.0.0.1:4020/y 127.0.0.1:3000 http://127.0.0.1:30010 localhost:3001';
  t.is(
    localize(text, { service: 5001, demo: 5002, admin: 5003 }),
    'curl http://127.0.0.1:5001/x http://127.0.0.1:5002/y 127.0.0.1:5003 http://127.0.0.1:30010 localhost:3001',
  );
  t.deepEqual(assignedVariables('A=1\n  export B_2="x"\nlower=1\nC+=1\necho D=1\nA=2\n  E=$(x)'), ['A', 'B_2', 'E']);
  // A prefix assignment sets the variable for its command only; a trailing comment is not a command.
  t.deepEqual(assignedVariables('F=true npm run -s cli -- x\nG=1   # why\nH=$(date) x'), ['G', 'H']);
});

test('blocks: commands that would change the checkout, start a service or run the tests are named, not run', (t) => {
  const unsafe = [
    'npm ci && npm start',
    'npm test',
    'npm run -s build',
    'npm run loadtest -- paid',
    'echo "SECRETS_KEY=$(openssl rand -hex 32)" >> .env',
    'cat > payroute.env <<EOF',
    'docker compose up -d',
    'curl -s "$BASE/x" | tee out.json',
    'rm -rf dist',
    'cp .env.example .env',
  ];
  unsafe.forEach((line, i) => {
    t.is(unsafeCommands(`true\n${line}`, 10 + i).length, 1, line);
    t.regex(unsafeCommands(`true\n${line}`, 10 + i)[0] ?? '', new RegExp(`^README line ${11 + i}: \``), line);
  });
  const safe = [
    'BUILDER=$(npm run -s cli -- users create --email b@example.com)',
    'npm run cli -- secrets rotate',
    'curl -s "$BASE/x" -d \'{"text":"npm test > a.txt"}\' | jq \'select(.n > 1)\' >/dev/null 2>&1',
    'curl -s "$BASE/payments?format=csv" > "$TMP/p.csv"; rm -f /tmp/x "$TMP/p.csv"',
    'curl -s "$BASE/x"   # then npm start, and > notes.txt',
    'curl -s -d \'{"a":\n  "docker > x"}\' "$BASE/y"',
    'docker_free=1 curl -s "$BASE/x" --rm x', // --rm is an option, not rm
  ];
  for (const line of safe) t.deepEqual(unsafeCommands(line, 1), [], line);
});

test('shapes: ... is any value, a trailing element, more members, or the middle of a string', (t) => {
  t.is(match(shape('{"a":"...","b":1,...}'), { a: [1], b: 1, c: 2 }), undefined);
  t.is(match(shape('{...}'), { x: 1 }), undefined);
  t.is(match(shape('[{...}, ...]'), [{ a: 1 }, 2]), undefined);
  t.is(
    match(shape('{"id":"0197...","h":"0x...","at":"...Z","m":"a...b...c"}'), {
      id: '0197ab',
      h: '0x',
      at: '2026-01-01T00:00:00Z',
      m: 'a-b-c',
    }),
    undefined,
  );
  t.is(match(shape('{"n":1.0,"v":...}'), { n: 1, v: null }), undefined);
  t.is(match(shape('"say \\"...\\""'), 'say "hi"'), undefined);
});

test('shapes: what does not match names the path', (t) => {
  t.like(match(shape('{"a":"..."}'), { b: 1 }), { path: '$.a', reason: 'missing' });
  t.like(match(shape('{"a":{"b":[1,2]}}'), { a: { b: [1, 3] } }), { path: '$.a.b[1]', depth: 3 });
  t.like(match(shape('[1]'), [1, 2]), { path: '$', reason: 'expected 1 elements, got 2' });
  t.like(match(shape('[1, ...]'), []), { reason: 'expected at least 1 elements, got 0' });
  t.like(match(shape('{"n":"1"}'), { n: 1 }), { path: '$.n' });
  t.like(match(shape('{"h":"0x..."}'), { h: 'x0' }), { path: '$.h' });
  t.like(match(shape('{"h":"ab...ba"}'), { h: 'aba' }), { path: '$.h' });
  t.like(match(shape('{"x y":null}'), { 'x y': false }), { path: '$["x y"]' });
  t.like(match(shape('{}'), []), { reason: 'expected an object, got []' });
  for (const bad of ['[..., 1]', '{"a"}', '{"a":1', '"abc', '{a:1}', '[1 2]', '"\\q"', 'nope']) {
    t.throws(() => parseShape(bad), undefined, bad);
  }
});

test('expectations: answers, status prefixes, continued lines, headers; prose is ignored', (t) => {
  const block = [
    'curl -s x', //                                                      10
    '# {"a":1,', //                                                      11
    '#  "b":[1,', //                                                     12
    '#   2]}   (b in cents)', //                                         13
    '# 201 {"c":"..."}', //                                               14
    '# "99"', //                                                         15
    '# 204 (no body)', //                                                16
    '# HTTP/1.1 200 OK', //                                              17
    '# Idempotent-Replayed: true', //                                    18
    '# Retry-After: 5', //                                               19
    '# {"d":"{[not a bracket"}', //                                      20
    '# DELETE "$BASE/x" revokes it: {"not":"an answer"}', //            21
    '#  {"indented":"a continuation line, never an answer"}', //         22
    'echo hi   # {"trailing":"comment, not an answer"}', //              23
    '# {"open":', //                                                     24
  ].join('\n');
  const found = expectations(block, 10);
  t.deepEqual(
    found.map((e) => [e.kind, e.line]),
    [
      ['answer', 11],
      ['answer', 14],
      ['answer', 15],
      ['status', 16],
      ['http', 17],
      ['answer', 20],
      ['invalid', 24],
    ],
  );
  t.like(found[0], { source: '{"a":1,\n"b":[1,\n2]}', status: undefined });
  t.like(found[1], { status: 201 });
  t.deepEqual(found[4], {
    kind: 'http',
    line: 17,
    status: 200,
    headers: [
      ['Idempotent-Replayed', 'true'],
      ['Retry-After', '5'],
    ],
  });
});

test('printed JSON: lines, values spanning lines, values one after the other, headers skipped', (t) => {
  const stdout = [
    'HTTP/1.1 200 OK\r',
    'Content-Type: application/json\r',
    '\r',
    '{"a":1}{"b":"}"}HTTP/1.1 404 Not Found',
    '{',
    '  "c": [',
    '    1',
    '  ]',
    '}',
    '"99"',
    'null',
    '{ not json',
    'plain text 5',
    '[1,2] trailing',
  ].join('\n');
  t.deepEqual(jsonValues(stdout), [{ a: 1 }, { b: '}' }, { c: [1] }, '99', null, [1, 2]]);
});

test('answers: each must match some printed value; a failure names the line, the shape and the closest values', (t) => {
  const block = '# {"a":{"b":2}}\n# 201 {"x":1}\n# HTTP/1.1 201 Created\n# Location: /p/...\n# Retry-After: 1';
  const stdout = 'HTTP/1.1 201 Created\nlocation: /p/7\nRetry-After: 30\n\n{"x":1}\n{"a":{"b":3}}\n{"z":0}';
  const problems = answerProblems(expectations(block, 5), stdout);
  t.is(problems.length, 1, problems.join('\n'));
  t.regex(problems[0] ?? '', /^README line 5: no JSON on stdout matches \{"a":\{"b":2\}\}/);
  // The value that went deepest comes first.
  t.regex(
    problems[0] ?? '',
    /closest first:\n {4}\{"a":\{"b":3\}\}\n {6}at \$\.a\.b: expected 2, got 3\n {4}\{"x":1\}/,
  );

  // Closest: the value that matches most of the shape, not the one whose first difference comes first.
  const [near] = answerProblems(expectations('# {"ok":true,"n":"98"}', 1), '{"total":0}\n{"ok":true,"n":"298"}');
  t.regex(
    near ?? '',
    /closest first:\n {4}\{"ok":true,"n":"298"\}\n {6}at \$\.n: expected "98", got "298"\n {4}\{"total":0\}/,
  );

  // A status prefix counts only where the block prints status lines; a status line and header must be there.
  t.deepEqual(answerProblems(expectations('# 404 {"x":1}\n# 204 (gone)', 1), '{"x":1}'), []);
  const missing = answerProblems(expectations('# 404 {"x":1}\n# HTTP/1.1 200 OK\n# X-A: b', 1), 'HTTP/2 201\n{"x":1}');
  t.is(missing.length, 3, missing.join('\n'));
  t.regex(missing[2] ?? '', /README line 2: header X-A: b expected, absent/);
  t.regex(answerProblems(expectations('# []', 7), 'text')[0] ?? '', /stdout holds no JSON value/);
});

/** Paths to the leaves of `v` a shape written from it fixes (a string holding `...` is a pattern, not fixed). */
function fixedLeaves(v: unknown, path: (string | number)[] = []): (string | number)[][] {
  if (Array.isArray(v)) return v.flatMap((x, i) => fixedLeaves(x, [...path, i]));
  if (typeof v === 'object' && v !== null) return Object.entries(v).flatMap(([k, x]) => fixedLeaves(x, [...path, k]));
  return typeof v === 'string' && v.includes('...') ? [] : [path];
}

/** JSON values whose strings often hold what the parsers must not be fooled by: `...`, quotes, brackets, `#`. */
const tricky = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    fc.constantFrom('...', '0x...', '...Z', 'a...b...', '{[...]}', '#  }', null, true, -0.5),
    fc.string({ unit: fc.constantFrom('.', '"', '\\', '{', ']', '#', 'a', ' '), maxLength: 12 }),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(fc.string({ maxLength: 6 }), tie('value'), { maxKeys: 4 }),
  ),
})).value;

function changed(v: unknown): unknown {
  if (typeof v === 'number') return v === 0 ? 1 : -v;
  if (typeof v === 'string') return `${v}x`;
  if (typeof v === 'boolean') return !v;
  return 0;
}

test('property: a value matches the shape written from it (on one line or continued), and not once a fixed value changed', (t) => {
  fc.assert(
    fc.property(fc.oneof(fc.jsonValue({ maxDepth: 4 }), tricky), fc.nat(), (value, pick) => {
      const actual = JSON.parse(JSON.stringify(value)) as unknown;
      if (match(shape(JSON.stringify(value)), actual) !== undefined) return false;
      // As a README comment: `# ` and the first line of the pretty JSON, `#  ` before each line after it.
      if ((typeof actual === 'object' && actual !== null) || typeof actual === 'string') {
        const [first, ...rest] = JSON.stringify(actual, null, 2).split('\n');
        const found = expectations([`# ${first}`, ...rest.map((l) => `#  ${l}`)].join('\n'), 1);
        if (found.length !== 1 || found[0]?.kind !== 'answer' || match(found[0].shape, actual) !== undefined) {
          return false;
        }
      }
      const leaves = fixedLeaves(actual);
      const path = leaves[pick % Math.max(1, leaves.length)];
      if (path === undefined) return true;
      const mutated = JSON.parse(JSON.stringify(actual)) as unknown;
      const key = path.at(-1);
      if (key === undefined) return match(shape(JSON.stringify(value)), changed(mutated)) !== undefined;
      let parent = mutated as Record<string | number, unknown>;
      for (const p of path.slice(0, -1)) parent = parent[p] as Record<string | number, unknown>;
      parent[key] = changed(parent[key]);
      return match(shape(JSON.stringify(value)), mutated) !== undefined;
    }),
    { numRuns: RUNS },
  );
  t.pass();
});

test('shell: blocks share variables; failing commands, pipefail and assigned values are reported per block', async (t) => {
  const shell = new Shell(ROOT, { PATH: process.env.PATH ?? '/usr/bin:/bin' });
  try {
    const [first, second] = runnableBlocks(FIXTURE);
    const one = await shell.run(first?.text ?? '', ['GREETING']);
    t.like(one, { status: 0, ended: undefined, failed: [], variables: { GREETING: 'hello' }, stderr: '' });
    t.deepEqual(answerProblems(expectations(first?.text ?? '', first?.line ?? 0), one.stdout), []);

    const two = await shell.run(second?.text ?? '', ['EMPTY']);
    t.like(two, { status: 0, variables: { EMPTY: 'null' } });
    t.is(two.stdout, 'hello again\n');
    // The middle stage's failure counts (pipefail), though the pipeline's last command succeeded.
    t.deepEqual(two.failed, [{ status: 1, command: 'true' }]);

    const three = await shell.run('ls /nonexistent-readme-path\nfalse', ['UNSET']);
    t.like(three, { status: 1, variables: { UNSET: '' } });
    t.deepEqual(
      three.failed.map((f) => f.command),
      ['ls /nonexistent-readme-path', 'false'],
    );
    t.regex(three.stderr, /nonexistent-readme-path/);

    // The ERR trap and pipefail come back even when a block turned them off; the session goes on.
    const four = await shell.run('trap - ERR; set +o pipefail; cd /', []);
    const five = await shell.run('false | true; pwd', []);
    t.like(five, { status: 0, stdout: '/\n' });
    t.deepEqual(five.failed, [{ status: 1, command: 'true' }]);
    t.like(four, { status: 0 });
  } finally {
    await shell.close();
  }
});

test('shell: a block past its time limit or one that exits ends the session, and says so', async (t) => {
  const slow = new Shell(ROOT, { PATH: process.env.PATH ?? '/usr/bin:/bin' });
  try {
    const run = await slow.run('echo started\nsleep 600', [], 500);
    t.is(run.status, undefined);
    t.regex(run.ended ?? '', /did not end within 500 ms/);
    t.is(run.stdout, 'started\n');
    t.regex((await slow.run('true', [])).ended ?? '', /already ended/);
  } finally {
    await slow.close();
  }
  const exiting = new Shell(ROOT, { PATH: process.env.PATH ?? '/usr/bin:/bin' });
  try {
    const run = await exiting.run('exit 3', []);
    t.regex(run.ended ?? '', /the shell session ended/);
    t.false(exiting.alive);
  } finally {
    await exiting.close();
  }
});
