// A strict reader of the Prometheus text exposition format 0.0.4 (prometheus.io/docs/instrumenting/exposition_formats):
// `# HELP` / `# TYPE` lines and samples `name{label="value",...} value`. Anything else is an error, so a test
// fails on malformed output instead of matching around it.

export interface Sample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

export interface Exposition {
  readonly samples: readonly Sample[];
  /** `# TYPE` of each metric family. */
  readonly types: ReadonlyMap<string, string>;
  /** `# HELP` of each metric family. */
  readonly help: ReadonlyMap<string, string>;
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*/;

function parseValue(text: string, line: string): number {
  if (text === '+Inf') return Number.POSITIVE_INFINITY;
  if (text === '-Inf') return Number.NEGATIVE_INFINITY;
  if (text === 'NaN') return Number.NaN;
  if (!/^[-+]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?$/.test(text))
    throw new Error(`not a sample value: ${JSON.stringify(text)} in ${JSON.stringify(line)}`);
  return Number(text);
}

/** Label set `{a="1",b="x\"y"}` at the start of `rest`: the labels and what follows the closing brace. */
function parseLabels(rest: string, line: string): { labels: Record<string, string>; after: string } {
  const labels: Record<string, string> = {};
  let i = 1;
  const fail = (why: string): never => {
    throw new Error(`${why} in ${JSON.stringify(line)}`);
  };
  while (rest[i] !== '}') {
    const name = LABEL_NAME.exec(rest.slice(i))?.[0] ?? fail('bad label name');
    i += name.length;
    if (rest.slice(i, i + 2) !== '="') fail('expected ="');
    i += 2;
    let value = '';
    for (;;) {
      const c = rest[i] ?? fail('unterminated label value');
      if (c === '"') break;
      if (c === '\\') {
        const e = rest[i + 1];
        value += e === 'n' ? '\n' : e === '\\' ? '\\' : e === '"' ? '"' : fail(`bad escape \\${e}`);
        i += 2;
      } else {
        value += c;
        i += 1;
      }
    }
    i += 1;
    if (name in labels) fail(`label ${name} twice`);
    labels[name] = value;
    if (rest[i] === ',') i += 1;
    else if (rest[i] !== '}') fail('expected , or }');
  }
  return { labels, after: rest.slice(i + 1) };
}

export function parseExposition(text: string): Exposition {
  const samples: Sample[] = [];
  const types = new Map<string, string>();
  const help = new Map<string, string>();
  for (const line of text.split('\n')) {
    if (line === '') continue;
    if (line.startsWith('#')) {
      const m = /^# (HELP|TYPE) ([a-zA-Z_:][a-zA-Z0-9_:]*) (.*)$/.exec(line);
      if (m === null) throw new Error(`bad comment line ${JSON.stringify(line)}`);
      const [, kind, name, rest] = m as unknown as [string, string, string, string];
      if (kind === 'TYPE') {
        if (!['counter', 'gauge', 'histogram', 'summary', 'untyped'].includes(rest))
          throw new Error(`bad type ${rest}`);
        types.set(name, rest);
      } else help.set(name, rest);
      continue;
    }
    const name = NAME.exec(line)?.[0];
    if (name === undefined) throw new Error(`bad sample line ${JSON.stringify(line)}`);
    let rest = line.slice(name.length);
    let labels: Record<string, string> = {};
    if (rest.startsWith('{')) ({ labels, after: rest = '' } = parseLabels(rest, line));
    const parts = rest.split(' ');
    // One space, the value, and optionally a timestamp.
    if (parts[0] !== '' || parts.length < 2 || parts.length > 3)
      throw new Error(`bad sample line ${JSON.stringify(line)}`);
    samples.push({ name, labels, value: parseValue(parts[1] ?? '', line) });
  }
  return { samples, types, help };
}

/** Samples of `name` whose labels include every one of `labels`. */
export function samplesOf(e: Exposition, name: string, labels: Record<string, string> = {}): Sample[] {
  return e.samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
}

/** The one sample of `name` with exactly `labels` (plus the `process` default label); 0 when there is none. */
export function sampleValue(e: Exposition, name: string, labels: Record<string, string>): number {
  const found = e.samples.filter(
    (s) =>
      s.name === name &&
      Object.keys(s.labels).filter((k) => k !== 'process').length === Object.keys(labels).length &&
      Object.entries(labels).every(([k, v]) => s.labels[k] === v),
  );
  if (found.length > 1) throw new Error(`${found.length} samples of ${name} ${JSON.stringify(labels)}`);
  return found[0]?.value ?? 0;
}
