// The README's executed examples: every ```sh fence (info string exactly `sh`) in README order, unless the nearest
// non-empty line above its opening fence is `<!-- not run: <reason> -->`. Other fences (console, text, yaml, plain)
// are never run, but they are still tracked so a ```sh inside one of them is not mistaken for an example.

export interface Block {
  /** 1-based README line of the block's first content line: every message names it. */
  line: number;
  text: string;
}

/** The origins the README writes literally, and the ones a test's own processes listen on. */
export interface Origins {
  service: number;
  demo: number;
  admin: number;
}

const OPENING = /^(\s*)(`{3,}|~{3,})(.*)$/;
const NOT_RUN = /^\s*<!--\s*not run\s*:\s*\S.*-->\s*$/;

/** The runnable blocks of `readme`; throws naming the line of an unclosed fence or a not-run marker without reason. */
export function runnableBlocks(readme: string): Block[] {
  const lines = readme.split('\n').map((l) => l.replace(/\r$/, ''));
  const blocks: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = OPENING.exec(lines[i] ?? '');
    if (open === null) continue;
    const [, indent = '', fence = '', info = ''] = open;
    // CommonMark: the closing fence uses the same character, at least as long, with nothing after it.
    const closing = new RegExp(`^\\s*${fence[0] === '`' ? '`' : '~'}{${fence.length},}\\s*$`);
    let end = i + 1;
    while (end < lines.length && !closing.test(lines[end] ?? '')) end++;
    if (end >= lines.length) throw new Error(`README line ${i + 1}: the fence ${fence}${info} is never closed`);
    if (info.trim() === 'sh' && !notRun(lines, i)) {
      // Content lines lose the opening fence's indentation (a fence inside a list item), as Markdown renders them.
      const strip = new RegExp(`^ {0,${indent.length}}`);
      blocks.push({
        line: i + 2,
        text: lines
          .slice(i + 1, end)
          .map((l) => l.replace(strip, ''))
          .join('\n'),
      });
    }
    i = end;
  }
  return blocks;
}

/** Whether the nearest non-empty line above line `i` marks the block as not run. */
function notRun(lines: readonly string[], i: number): boolean {
  for (let j = i - 1; j >= 0; j--) {
    const line = lines[j] ?? '';
    if (line.trim() === '') continue;
    if (NOT_RUN.test(line)) return true;
    // A marker without its reason is a mistake the author should hear about, not a block silently run.
    if (/^\s*<!--\s*not run\b/i.test(line)) throw new Error(`README line ${j + 1}: write <!-- not run: <reason> -->`);
    return false;
  }
  return false;
}

/**
 * `text` with the README's literal origins replaced by the test's ports: the service (3001), the demo merchants
 * (4020) and the admin port (3000). A longer port (30010) is not a match.
 */
export function localize(text: string, origins: Origins): string {
  return text
    .replace(/http:\/\/127\.0\.0\.1:3001(?!\d)/g, `http://127.0.0.1:${origins.service}`)
    .replace(/http:\/\/127\.0\.0\.1:4020(?!\d)/g, `http://127.0.0.1:${origins.demo}`)
    .replace(/127\.0\.0\.1:3000(?!\d)/g, `127.0.0.1:${origins.admin}`);
}

/**
 * The variables a block assigns at the start of a line (`NAME=...`, `export NAME=...`), in order, once each. A
 * plain word followed by a command (`NAME=true npm run ...`) sets the variable for that command only: not counted.
 */
export function assignedVariables(text: string): string[] {
  const names: string[] = [];
  for (const line of text.split('\n')) {
    if (/^\s*[A-Z][A-Z0-9_]*=[^\s$'"(`]*\s+[^\s#]/.test(line)) continue;
    const name = /^\s*(?:export\s+)?([A-Z][A-Z0-9_]*)=/.exec(line)?.[1];
    if (name !== undefined && !names.includes(name)) names.push(name);
  }
  return names;
}

/**
 * `text` as bash reads its commands: comments removed and the contents of quoted strings blanked (quotes and line
 * breaks kept), so a JSON body or a jq filter (`'select(.n > 1)'`) is not read as a command or a redirection.
 */
function commandsOnly(text: string): string {
  let out = '';
  let quote: '"' | "'" | undefined;
  for (let i = 0; i < text.length; i++) {
    const c = text[i] ?? '';
    if (quote !== undefined) {
      if (c === '\\' && quote === '"') {
        out += text[i + 1] === '\n' ? ' \n' : '  ';
        i++;
      } else if (c === quote) {
        out += c;
        quote = undefined;
      } else out += c === '\n' ? '\n' : ' ';
    } else if (c === '\\') {
      out += c + (text[i + 1] ?? '');
      i++;
    } else if (c === '"' || c === "'") {
      quote = c;
      out += c;
    } else if (c === '#' && (i === 0 || /\s/.test(text[i - 1] ?? ''))) {
      while (i + 1 < text.length && text[i + 1] !== '\n') i++;
    } else out += c;
  }
  return out;
}

/** Commands a runnable block must not run in the test: the checkout, this machine or the test run itself change. */
const UNSAFE: [RegExp, string][] = [
  [
    /\bnpm\s+(?:-\S+\s+)*(?:ci|install|i|add|uninstall|update|test|t|start|restart|stop)\b/,
    'installs, tests or starts',
  ],
  [
    /\bnpm\s+(?:-\S+\s+)*run(?:-script)?\s+(?:-\S+\s+)*(?:dev|build|format|test\S*|start\S*|docs:errors|db:migration:create|contracts:build|loadtest\S*|bench\S*)\b/,
    'builds, rewrites sources, tests or starts',
  ],
  [/\b(?:docker|git|sudo|apt-get|apt|pkill|killall)\b/, 'acts outside the test'],
  [/(?<![<&>])>>?\s*(?![&/$"'~>\s])[^\s;|&)<>]+/, 'writes a file into the checkout'],
];

/**
 * Why `text` must not run against the checkout, one message per offending line (README line numbers from
 * `first`); empty when it may. The README marks such a block `<!-- not run: <reason> -->`.
 */
export function unsafeCommands(text: string, first: number): string[] {
  const found: string[] = [];
  commandsOnly(text)
    .split('\n')
    .forEach((line, i) => {
      for (const [pattern, what] of UNSAFE) {
        const m = pattern.exec(line);
        if (m !== null) found.push(`README line ${first + i}: \`${m[0].trim()}\` ${what}`);
      }
      // A file command with a relative path works in the checkout (the blocks' working directory).
      for (const m of line.matchAll(/(?<![-\w])(tee|cp|mv|rm|ln|touch|mkdir)\s([^;|&)]*)/g)) {
        const relative = (m[2] ?? '').split(/\s+/).find((arg) => arg !== '' && !/^[-/$~"']/.test(arg));
        if (relative !== undefined)
          found.push(`README line ${first + i}: \`${m[1]} ${relative}\` changes the checkout`);
      }
    });
  return found;
}
