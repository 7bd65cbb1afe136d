// Untrusted router input parsed with its schema, at every door (the proxy's routes, the MCP tools): a failure is
// 400 BCK.ROUTER.0001 naming each failing path under `where` (`body`, `query`, `arguments`), the same words wherever
// the input came in.
import type { z } from 'zod';
import { AppError } from '../errors/app-error.js';

export function parseOr400<S extends z.ZodType>(schema: S, value: unknown, where: string): z.output<S> {
  const r = schema.safeParse(value);
  if (r.success) return r.data;
  const issues = r.error.issues.slice(0, 20).map((i) => `${[where, ...i.path.map(String)].join('.')}: ${i.message}`);
  throw new AppError('BCK.ROUTER.0001', { details: issues.join('; '), params: { issues } });
}
