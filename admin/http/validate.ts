import type { z } from 'zod';
import { AppError } from '../../shared/errors/app-error.js';

/** Parses untrusted input; a failure is a 400 naming every offending path (never a 500). */
export function parse<S extends z.ZodType>(schema: S, value: unknown, where = 'body'): z.output<S> {
  const r = schema.safeParse(value);
  if (r.success) return r.data;
  const issues = r.error.issues
    .slice(0, 20)
    .map((i) => ({ path: [where, ...i.path.map(String)].join('.'), message: i.message }));
  throw new AppError('BCK.HTTP.0400', {
    details: issues.map((i) => `${i.path}: ${i.message}`).join('; '),
    params: { issues },
  });
}
