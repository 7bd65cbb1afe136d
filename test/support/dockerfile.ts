// The Dockerfile as the build tests read it: its stages, each with its instructions in order (continuation lines
// joined, comments dropped). With no Docker engine here, test/operations/build-image.test.ts replays the install and build
// steps from it, so the test and the image cannot drift apart.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export const DOCKERFILE_PATH = fileURLToPath(new URL('../../Dockerfile', import.meta.url));

export interface Instruction {
  /** Upper case: FROM, RUN, COPY, ... */
  readonly keyword: string;
  /** The rest of the instruction, continuation lines joined by a space. */
  readonly args: string;
}

export interface Stage {
  readonly name: string;
  readonly image: string;
  readonly instructions: readonly Instruction[];
}

export function parseDockerfile(text: string = readFileSync(DOCKERFILE_PATH, 'utf8')): Stage[] {
  const logical: string[] = [];
  let pending = '';
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    // A comment line inside a continued instruction is dropped too (Docker does the same).
    if (line.startsWith('#') || (line === '' && pending === '')) continue;
    if (line.endsWith('\\')) {
      pending += `${line.slice(0, -1).trim()} `;
      continue;
    }
    logical.push(`${pending}${line}`.trim());
    pending = '';
  }
  const stages: { name: string; image: string; instructions: Instruction[] }[] = [];
  for (const entry of logical) {
    if (entry === '') continue;
    const m = /^(\S+)\s*(.*)$/.exec(entry);
    const keyword = (m?.[1] ?? '').toUpperCase();
    const args = m?.[2] ?? '';
    if (keyword === 'FROM') {
      const from = /^(\S+)(?:\s+AS\s+(\S+))?$/i.exec(args);
      if (from === null) throw new Error(`unreadable FROM: ${args}`);
      stages.push({ image: from[1] ?? '', name: from[2] ?? String(stages.length), instructions: [] });
      continue;
    }
    const stage = stages.at(-1);
    if (stage === undefined) throw new Error(`${keyword} before any FROM`);
    stage.instructions.push({ keyword, args });
  }
  return stages;
}

/** `ENV A=1 B=2` (the only ENV form the Dockerfile uses). */
export function envOf(args: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const pair of args.split(/\s+/).filter((p) => p !== '')) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw new Error(`ENV without NAME=value: ${pair}`);
    out[pair.slice(0, eq)] = pair.slice(eq + 1);
  }
  return out;
}

/** `COPY [--from=stage] [--chown=...] src... dest`. */
export function copyOf(args: string): { from: string | undefined; sources: string[]; dest: string } {
  const words = args.split(/\s+/).filter((w) => w !== '');
  let from: string | undefined;
  const rest: string[] = [];
  for (const w of words) {
    if (w.startsWith('--from=')) from = w.slice('--from='.length);
    else if (w.startsWith('--')) continue;
    else rest.push(w);
  }
  const dest = rest.pop();
  if (dest === undefined || rest.length === 0) throw new Error(`unreadable COPY: ${args}`);
  return { from, sources: rest, dest };
}

/** The shell commands of a RUN line, in order (`a && b`). */
export function commandsOf(args: string): string[] {
  return args
    .split('&&')
    .map((c) => c.trim())
    .filter((c) => c !== '');
}
