// One bash session that runs README blocks one after the other, as a reader pastes them into one terminal: shell
// variables set by a block are seen by the next. Each block is a file sourced with its output in files of its own;
// a unique sentinel on bash's own stdout says it ended. No `set -e` (it would end the session at the first failing
// command): an ERR trap records every failing command instead, and `pipefail` makes a failing stage of a pipeline
// count.
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface FailedCommand {
  status: number;
  command: string;
}

export interface BlockRun {
  /** The status of the block's last command; undefined when it did not end (time limit, the shell died). */
  status: number | undefined;
  /** Why the block did not end, when it did not. */
  ended: string | undefined;
  /** Every command the ERR trap saw fail, in order. */
  failed: FailedCommand[];
  stdout: string;
  stderr: string;
  /** The values of the variables asked for, read from the session after the block. */
  variables: Record<string, string>;
}

/** Records a failing command: its status and text, NUL-terminated (a command may span lines). */
const PRELUDE = `__rt_err() { printf '%s\\t%s\\0' "$1" "$2" >>"$__RT_FAILS"; }\n`;

const quote = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;

export class Shell {
  private readonly dir = mkdtempSync(join(tmpdir(), 'payroute-readme-shell-'));
  private readonly child: ChildProcess;
  private output = '';
  private exited = false;
  private count = 0;
  private onOutput: (() => void) | undefined;

  /** bash without profile or rc files, in `cwd` with exactly `env`; its own process group, killed as one. */
  constructor(cwd: string, env: Record<string, string>) {
    this.child = spawn('bash', ['--noprofile', '--norc'], {
      cwd,
      env,
      stdio: ['pipe', 'pipe', 'pipe'],
      detached: true,
    });
    this.child.stdout?.on('data', (d: Buffer) => {
      this.output += d.toString();
      this.onOutput?.();
    });
    // bash's own complaints (a block's go to its stderr file): kept for the message when the session dies.
    this.child.stderr?.on('data', (d: Buffer) => {
      this.output += d.toString();
    });
    this.child.stdin?.on('error', () => {
      // the session died: run() reports it
    });
    // 'close', not 'exit': the sentinel of a block may still be in the pipe when bash exits.
    this.child.on('close', () => {
      this.exited = true;
      this.onOutput?.();
    });
    this.child.stdin?.write(PRELUDE);
  }

  get alive(): boolean {
    return !this.exited;
  }

  /** Runs `text` in the session within `limitMs` (past it, the session is killed), then reads `variables`. */
  async run(text: string, variables: readonly string[], limitMs = 120_000): Promise<BlockRun> {
    const n = ++this.count;
    const file = (what: string) => join(this.dir, `${n}.${what}`);
    writeFileSync(file('sh'), `${text}\n`);
    const sentinel = `__RT_DONE_${n}_${randomBytes(8).toString('hex')}`;
    const source = `source ${quote(file('sh'))}`;
    // Reset before each block (a block may have changed them); stdin from /dev/null so that no command of the block
    // reads the commands meant for the session; the trap is off again before the variables are read.
    const command = [
      `__RT_FAILS=${quote(file('failed'))}`,
      ': >"$__RT_FAILS"',
      'set -o pipefail',
      `trap '__rt_err "$?" "$BASH_COMMAND"' ERR`,
      `${source} >${quote(file('out'))} 2>${quote(file('err'))} </dev/null`,
      '__rt_rc=$?',
      'trap - ERR',
      `printf '%s\\0' ${variables.map((v) => `"\${${v}-}"`).join(' ')} >${quote(file('vars'))}`,
      `printf '\\n%s %s\\n' ${sentinel} "$__rt_rc"`,
    ].join('; ');
    const mark = this.output.length;
    let ended: string | undefined;
    let status: number | undefined;
    if (this.exited) ended = 'the shell session had already ended';
    else {
      this.child.stdin?.write(`${command}\n`);
      const done = new RegExp(`\\n${sentinel} (\\d+)\\n`);
      ended = await new Promise<string | undefined>((resolve) => {
        const timer = setTimeout(() => {
          this.onOutput = undefined;
          this.kill();
          resolve(`did not end within ${limitMs} ms: the session was killed`);
        }, limitMs);
        this.onOutput = () => {
          const m = done.exec(this.output.slice(mark));
          if (m !== null) status = Number(m[1]);
          else if (!this.exited) return;
          clearTimeout(timer);
          this.onOutput = undefined;
          const said = this.output.slice(mark).trim();
          resolve(m !== null ? undefined : `the shell session ended (exit, set -e?)${said ? `: ${said}` : ''}`);
        };
        this.onOutput();
      });
    }
    const read = (what: string) => (existsSync(file(what)) ? readFileSync(file(what), 'utf8') : '');
    const failed = read('failed')
      .split('\0')
      .filter((r) => r !== '')
      .map((r) => ({ status: Number(r.slice(0, r.indexOf('\t'))), command: r.slice(r.indexOf('\t') + 1) }))
      // The `source` line itself fails when the block's last command did: that is the block's status, not a command.
      .filter((r) => !r.command.startsWith(source));
    const values = read('vars').split('\0');
    return {
      status,
      ended,
      failed,
      stdout: read('out'),
      stderr: read('err'),
      variables: Object.fromEntries(variables.map((v, i) => [v, values[i] ?? ''])),
    };
  }

  /** Ends the session and whatever its blocks left running (`cmd &`), then removes its files. */
  async close(): Promise<void> {
    if (!this.exited) {
      this.child.stdin?.end();
      const exit = new Promise<void>((resolve) => this.child.once('close', () => resolve()));
      await Promise.race([exit, new Promise((r) => setTimeout(r, 10_000).unref())]);
    }
    this.kill();
    rmSync(this.dir, { recursive: true, force: true });
  }

  private kill(): void {
    this.exited = true;
    try {
      if (this.child.pid !== undefined) process.kill(-this.child.pid, 'SIGKILL');
    } catch {
      // nothing of the group is left
    }
  }
}
