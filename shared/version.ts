// The service's version, from package.json: read from the sources (shared/) or from the compiled code (dist/shared/).
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';

const PACKAGE_JSON = ['../package.json', '../../package.json'].map((p) => fileURLToPath(new URL(p, import.meta.url)));

const Package = z.object({ version: z.string().min(1) });

let version: string | undefined;

/** The version in package.json ('0.0.0' when there is none to read), read once. */
export function serviceVersion(): string {
  if (version !== undefined) return version;
  const file = PACKAGE_JSON.find((p) => existsSync(p));
  const parsed = file === undefined ? undefined : Package.safeParse(JSON.parse(readFileSync(file, 'utf8')));
  version = parsed?.success === true ? parsed.data.version : '0.0.0';
  return version;
}
