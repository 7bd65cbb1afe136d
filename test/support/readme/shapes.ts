// The answers a README block shows in its comments, and whether the block printed them. An answer is a SHAPE:
// JSON where `"..."` is any value, a bare `...` member or trailing element means "more may follow", and a string
// containing `...` (`"0x..."`, `"...Z"`) is a prefix and suffix. A small parser of its own reads it: rewriting the
// shape into JSON by regex would break on strings that contain `...`.

export type Shape =
  | { kind: 'any' }
  | { kind: 'literal'; value: string | number | boolean | null }
  | { kind: 'pattern'; parts: string[] }
  | { kind: 'object'; members: [string, Shape][] }
  | { kind: 'array'; items: Shape[]; open: boolean };

/** Where an actual value departs from a shape. */
export interface Mismatch {
  path: string;
  reason: string;
  /** Segments of `path`: a deeper mismatch means a closer value. */
  depth: number;
}

/** One thing a block's comments say it prints. */
export type Expectation =
  | { kind: 'answer'; line: number; status: number | undefined; source: string; shape: Shape }
  | { kind: 'status'; line: number; status: number }
  | { kind: 'http'; line: number; status: number; headers: [string, string][] }
  | { kind: 'invalid'; line: number; reason: string };

/**
 * Index just past the JSON-like value starting at `start` (an object, array or string: brackets inside strings do
 * not count), or -1 when it does not close in `text`.
 */
export function valueEnd(text: string, start: number): number {
  let depth = 0;
  for (let i = start; i < text.length; i++) {
    const c = text[i];
    if (c === '"') {
      i = stringEnd(text, i) - 1;
      if (i < 0) return -1;
      if (depth === 0) return i + 1;
    } else if (c === '{' || c === '[') depth++;
    else if (c === '}' || c === ']') {
      depth--;
      if (depth === 0) return i + 1;
      if (depth < 0) return -1;
    }
  }
  return -1;
}

/** Index just past the string literal opening at `start`, or -1 (a raw line break ends the search: JSON has none). */
function stringEnd(text: string, start: number): number {
  for (let i = start + 1; i < text.length; i++) {
    const c = text[i];
    if (c === '\\') i++;
    else if (c === '"') return i + 1;
    else if (c === '\n') return -1;
  }
  return -1;
}

/** Parses a shape; throws with the column of what it cannot read. Text after the shape is the caller's. */
export function parseShape(text: string): { shape: Shape; end: number } {
  let pos = 0;
  const fail = (what: string): never => {
    throw new Error(`${what} at column ${pos + 1} of ${JSON.stringify(text.slice(0, 200))}`);
  };
  const space = () => {
    while (pos < text.length && /\s/.test(text[pos] ?? '')) pos++;
  };
  const ellipsis = (): boolean => {
    space();
    if (!text.startsWith('...', pos)) return false;
    pos += 3;
    return true;
  };
  const string = (): string => {
    const end = stringEnd(text, pos);
    if (end < 0) fail('unterminated string');
    try {
      const value = JSON.parse(text.slice(pos, end)) as string;
      pos = end;
      return value;
    } catch {
      return fail('bad string escape');
    }
  };
  /** Steps over the closing bracket of `shape`. */
  const closed = (shape: Shape): Shape => {
    pos++;
    return shape;
  };
  const expect = (c: string) => {
    space();
    if (text[pos] !== c) fail(`expected ${c}`);
    pos++;
  };
  const value = (): Shape => {
    space();
    const c = text[pos];
    if (c === '{') return object();
    if (c === '[') return array();
    if (c === '"') {
      const s = string();
      if (s === '...') return { kind: 'any' };
      return s.includes('...') ? { kind: 'pattern', parts: s.split('...') } : { kind: 'literal', value: s };
    }
    // A bare `...` where a member's value goes reads as "any value", like "...".
    if (ellipsis()) return { kind: 'any' };
    const word = /true|false|null|-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
    word.lastIndex = pos;
    const m = word.exec(text);
    if (m === null) return fail('expected a value');
    pos += m[0].length;
    return { kind: 'literal', value: JSON.parse(m[0]) as boolean | null | number };
  };
  const object = (): Shape => {
    pos++;
    const members: [string, Shape][] = [];
    space();
    if (text[pos] === '}') return closed({ kind: 'object', members });
    for (;;) {
      // A bare `...` member: more members may follow, which is always allowed anyway.
      if (!ellipsis()) {
        space();
        if (text[pos] !== '"') fail('expected a key or ...');
        const key = string();
        expect(':');
        members.push([key, value()]);
      }
      space();
      if (text[pos] === '}') return closed({ kind: 'object', members });
      expect(',');
    }
  };
  const array = (): Shape => {
    pos++;
    const items: Shape[] = [];
    space();
    if (text[pos] === ']') return closed({ kind: 'array', items, open: false });
    for (;;) {
      if (ellipsis()) {
        // Only a trailing `...`: the shown elements are a prefix.
        expect(']');
        return { kind: 'array', items, open: true };
      }
      items.push(value());
      space();
      if (text[pos] === ']') return closed({ kind: 'array', items, open: false });
      expect(',');
    }
  };
  const shape = value();
  return { shape, end: pos };
}

/** Where `actual` departs from `shape`, or undefined when it matches. */
export function match(shape: Shape, actual: unknown, path = '$'): Mismatch | undefined {
  const depth = path.split(/[.[]/).length - 1;
  const off = (reason: string): Mismatch => ({ path, reason, depth });
  switch (shape.kind) {
    case 'any':
      return undefined;
    case 'literal':
      return actual === shape.value ? undefined : off(`expected ${JSON.stringify(shape.value)}, got ${show(actual)}`);
    case 'pattern':
      return typeof actual === 'string' && glob(shape.parts, actual)
        ? undefined
        : off(`expected ${JSON.stringify(shape.parts.join('...'))}, got ${show(actual)}`);
    case 'object': {
      if (typeof actual !== 'object' || actual === null || Array.isArray(actual)) {
        return off(`expected an object, got ${show(actual)}`);
      }
      for (const [key, member] of shape.members) {
        const at = /^[A-Za-z_$][\w$]*$/.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`;
        if (!Object.hasOwn(actual, key)) return { path: at, reason: 'missing', depth: depth + 1 };
        const miss = match(member, (actual as Record<string, unknown>)[key], at);
        if (miss !== undefined) return miss;
      }
      return undefined;
    }
    case 'array': {
      if (!Array.isArray(actual)) return off(`expected an array, got ${show(actual)}`);
      const n = shape.items.length;
      if (shape.open ? actual.length < n : actual.length !== n) {
        return off(`expected ${shape.open ? 'at least ' : ''}${n} elements, got ${actual.length}`);
      }
      for (let i = 0; i < n; i++) {
        const miss = match(shape.items[i] ?? { kind: 'any' }, actual[i], `${path}[${i}]`);
        if (miss !== undefined) return miss;
      }
      return undefined;
    }
  }
}

/** How much of `shape` `actual` matches (keys present, leaves equal, all the way down): orders the closest first. */
export function closeness(shape: Shape, actual: unknown): number {
  if (shape.kind === 'object') {
    if (typeof actual !== 'object' || actual === null || Array.isArray(actual)) return 0;
    return shape.members.reduce(
      (sum, [key, member]) =>
        Object.hasOwn(actual, key) ? sum + 1 + closeness(member, (actual as Record<string, unknown>)[key]) : sum,
      1,
    );
  }
  if (shape.kind === 'array') {
    if (!Array.isArray(actual)) return 0;
    return shape.items.reduce((sum, item, i) => (i < actual.length ? sum + closeness(item, actual[i]) : sum), 1);
  }
  return match(shape, actual) === undefined ? 1 : 0;
}

/** Whether `s` starts with the first part, ends with the last, and holds the middle ones in order between. */
function glob(parts: readonly string[], s: string): boolean {
  if (parts.length === 1) return s === parts[0];
  const first = parts[0] ?? '';
  const last = parts.length > 1 ? (parts[parts.length - 1] ?? '') : '';
  if (s.length < first.length + last.length || !s.startsWith(first) || !s.endsWith(last)) return false;
  let at = first.length;
  const stop = s.length - last.length;
  for (const part of parts.slice(1, -1)) {
    const found = s.indexOf(part, at);
    if (found < 0 || found + part.length > stop) return false;
    at = found + part.length;
  }
  return true;
}

/** A value for a message, clipped. */
export function show(value: unknown, max = 300): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > max ? `${text.slice(0, max)}... (${text.length} chars)` : text;
}

const ANSWER = /^(?:(\d{3}) +)?(?=[{["])/;
const HTTP = /^HTTP\/\d(?:\.\d)? (\d{3})\b/;
const HEADER = /^#\s([!#$%&'*+.^_`|~0-9A-Za-z-]+):\s*(.*)$/;

/** What the comment lines of a block (its first line is README line `first`) say it prints. */
export function expectations(text: string, first: number): Expectation[] {
  const lines = text.split('\n').map((l) => l.trim());
  const found: Expectation[] = [];
  for (let i = 0; i < lines.length; i++) {
    // `# ` and then the answer: `#  ` (two spaces) is a continuation line, never the start of an answer.
    const content = /^# (\S.*)$/.exec(lines[i] ?? '')?.[1];
    if (content === undefined) continue;
    const line = first + i;
    const http = HTTP.exec(content);
    if (http !== null) {
      const headers: [string, string][] = [];
      for (let h = HEADER.exec(lines[i + 1] ?? ''); h !== null; h = HEADER.exec(lines[i + 1] ?? '')) {
        headers.push([h[1] ?? '', (h[2] ?? '').trim()]);
        i++;
      }
      found.push({ kind: 'http', line, status: Number(http[1]), headers });
      continue;
    }
    const answer = ANSWER.exec(content);
    if (answer === null) {
      const status = /^(\d{3})(?:\s|$)/.exec(content)?.[1];
      if (status !== undefined) found.push({ kind: 'status', line, status: Number(status) });
      continue;
    }
    let source = content.slice(answer[0].length);
    // Unbalanced on its line: the following `#  ` lines continue it until it closes.
    while (valueEnd(source, 0) < 0) {
      const more = /^#\s{2,}(.*)$/.exec(lines[i + 1] ?? '')?.[1];
      if (more === undefined) break;
      source += `\n${more}`;
      i++;
    }
    const end = valueEnd(source, 0);
    const status = answer[1] === undefined ? undefined : Number(answer[1]);
    if (end < 0) {
      found.push({ kind: 'invalid', line, reason: 'the answer does not close (continue it on lines starting "#  ")' });
      continue;
    }
    source = source.slice(0, end);
    try {
      found.push({ kind: 'answer', line, status, source, shape: parseShape(source).shape });
    } catch (e) {
      found.push({ kind: 'invalid', line, reason: `the answer is not a shape: ${(e as Error).message}` });
    }
  }
  return found;
}

/**
 * Every JSON value printed on `stdout`: whole lines (`jq -r`'s scalars), objects and arrays that may span lines
 * (`jq .`) or follow each other on one line (curl prints no final newline). Lines that are not JSON are skipped.
 */
export function jsonValues(stdout: string): unknown[] {
  const values: unknown[] = [];
  let p = 0;
  while (p < stdout.length) {
    const c = stdout[p];
    if (c === ' ' || c === '\t' || c === '\r' || c === '\n') {
      p++;
      continue;
    }
    const lineEnd = stdout.indexOf('\n', p) < 0 ? stdout.length : stdout.indexOf('\n', p);
    if (c === '{' || c === '[') {
      const end = valueEnd(stdout, p);
      const parsed = end < 0 ? undefined : parse(stdout.slice(p, end));
      if (parsed !== undefined) {
        values.push(parsed.value);
        p = end;
        continue;
      }
    } else {
      const parsed = parse(stdout.slice(p, lineEnd).trim());
      if (parsed !== undefined) values.push(parsed.value);
    }
    p = lineEnd + 1;
  }
  return values;
}

function parse(text: string): { value: unknown } | undefined {
  try {
    return { value: JSON.parse(text) as unknown };
  } catch {
    return undefined;
  }
}

/** The status codes of the HTTP status lines on stdout (curl -i / -D -); one may follow a body on its line. */
export function statusLines(stdout: string): number[] {
  return [...stdout.matchAll(/(?:^|(?<=[}\]"]))HTTP\/\d(?:\.\d)? (\d{3})\b/gm)].map((m) => Number(m[1]));
}

/** The `Name: value` header lines on stdout, names lower-cased. */
function headerLines(stdout: string): [string, string][] {
  return [...stdout.matchAll(/^([!#$%&'*+.^_`|~0-9A-Za-z-]+):[ \t]*(.*?)\r?$/gm)].map((m) => [
    (m[1] ?? '').toLowerCase(),
    (m[2] ?? '').trim(),
  ]);
}

/** At most this many actual values in one message (each clipped). */
const SHOWN = 30;

/** Headers whose value changes from run to run: only their presence is checked. */
const VOLATILE = new Set(['retry-after', 'date']);

/** What the block printed that its comments say otherwise; one message per problem, naming the README line. */
export function answerProblems(expected: readonly Expectation[], stdout: string): string[] {
  const values = jsonValues(stdout);
  const statuses = statusLines(stdout);
  const printsStatus = statuses.length > 0;
  const problems: string[] = [];
  const statusMissing = (line: number, status: number) =>
    `README line ${line}: no HTTP status line ${status} on stdout (status lines: ${statuses.join(', ')})`;
  for (const e of expected) {
    if (e.kind === 'invalid') problems.push(`README line ${e.line}: ${e.reason}`);
    else if (e.kind === 'status') {
      if (printsStatus && !statuses.includes(e.status)) problems.push(statusMissing(e.line, e.status));
    } else if (e.kind === 'http') {
      if (!statuses.includes(e.status)) problems.push(statusMissing(e.line, e.status));
      const actual = headerLines(stdout);
      for (const [name, value] of e.headers) {
        const lower = name.toLowerCase();
        const same = actual.filter(([n]) => n === lower);
        const ok = same.some(([, v]) => VOLATILE.has(lower) || glob(value.split('...'), v));
        if (!ok) {
          const seen = same.length === 0 ? 'absent' : `got ${same.map(([, v]) => JSON.stringify(v)).join(', ')}`;
          problems.push(`README line ${e.line}: header ${name}: ${value} expected, ${seen}`);
        }
      }
    } else {
      if (e.status !== undefined && printsStatus && !statuses.includes(e.status)) {
        problems.push(statusMissing(e.line, e.status));
      }
      const misses = values.map((value) => ({ value, miss: match(e.shape, value), score: closeness(e.shape, value) }));
      if (misses.some((m) => m.miss === undefined)) continue;
      const closest = misses
        .sort((a, b) => b.score - a.score || (b.miss?.depth ?? 0) - (a.miss?.depth ?? 0))
        .slice(0, SHOWN)
        .map((m) => `    ${show(m.value)}\n      at ${m.miss?.path}: ${m.miss?.reason}`);
      if (misses.length > SHOWN) closest.push(`    ... and ${misses.length - SHOWN} more values`);
      problems.push(
        `README line ${e.line}: no JSON on stdout matches ${e.source}\n` +
          (closest.length === 0 ? '    (stdout holds no JSON value)' : `  closest first:\n${closest.join('\n')}`),
      );
    }
  }
  return problems;
}
