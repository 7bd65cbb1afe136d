import type { z } from 'zod';
import { AppError } from '../../shared/errors/app-error.js';

/** Parses untrusted input with a schema; failure is 400 naming the paths (router requests: BCK.ROUTER.0001). */
export function parseOr400<S extends z.ZodType>(schema: S, value: unknown, where: string): z.output<S> {
  const r = schema.safeParse(value);
  if (r.success) return r.data;
  const issues = r.error.issues.slice(0, 20).map((i) => `${[where, ...i.path.map(String)].join('.')}: ${i.message}`);
  throw new AppError('BCK.ROUTER.0001', { details: issues.join('; '), params: { issues } });
}

export function queryOf(url: URL): Record<string, string> {
  const q: Record<string, string> = {};
  for (const [k, v] of url.searchParams) q[k] = v;
  return q;
}
