// Runs the operator CLI as a user does: a real `node --import tsx admin/cli/cli.ts ...` process per command.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

export interface CliResult extends ProcessOutput {
  /** The one JSON object printed on stdout. */ json: Record<string, any>;
}

/** What a finished process printed. */
export interface ProcessOutput {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs one of the project's entry points (`admin/cli/cli.ts`, `admin/server.ts`, ...) under tsx to its end. */
export function runEntry(entry: string, args: string[], env: Record<string, string>): Promise<ProcessOutput> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', entry, ...args], {
      cwd: ROOT,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    // Only bounds a hung process: on a loaded machine one start (tsx, migrations) can take far longer than on an
    // idle one.
    const timer = setTimeout(() => child.kill('SIGKILL'), 300_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/**
 * A worker script of the tests (`test/support/*-worker.ts`) run to its end with `args` as its one JSON argument: the
 * last line it printed, parsed. A non-zero exit fails the test with what the worker wrote on stderr.
 */
export async function runWorker<T>(script: string, args: object, env: Record<string, string>): Promise<T> {
  const out = await runEntry(script, [JSON.stringify(args)], env);
  if (out.code !== 0) throw new Error(`${script} exited ${out.code}: ${out.stderr}`);
  return JSON.parse(out.stdout.trim().split('\n').pop() ?? '{}') as T;
}

/** The operator CLI with `args`, and the one JSON object it printed (empty when it printed none). */
export async function runCli(args: string[], env: Record<string, string>): Promise<CliResult> {
  const out = await runEntry('admin/cli/cli.ts', args, env);
  let json: Record<string, any> = {};
  try {
    json = JSON.parse(out.stdout);
  } catch {
    // asserted by the caller through exactlyOneJsonObject
  }
  return { ...out, json };
}
