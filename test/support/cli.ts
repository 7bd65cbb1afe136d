// Runs the operator CLI as a user does: a real `node --import tsx admin/cli/cli.ts ...` process per command.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
  /** The one JSON object printed on stdout. */
  json: Record<string, any>;
}

export function runCli(args: string[], env: Record<string, string>): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'admin/cli/cli.ts', ...args], {
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
    // Only bounds a hung CLI: on a loaded machine one call (tsx, migrations) can take far longer than on an idle one.
    const timer = setTimeout(() => child.kill('SIGKILL'), 300_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      let json: Record<string, any> = {};
      try {
        json = JSON.parse(stdout);
      } catch {
        // asserted by the caller through exactlyOneJsonObject
      }
      resolve({ code, stdout, stderr, json });
    });
  });
}
