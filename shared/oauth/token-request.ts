// What every token-endpoint grant shares: the body parsed against the grant's schema (an error is
// invalid_request, RFC 6749 §5.2) and the public client it names (unknown or disabled: invalid_client, 401).
import type { z } from 'zod';
import type { ServiceContext } from '../context.js';
import { AppError } from '../errors/app-error.js';
import { type ClientView, enabledClient } from './clients.js';
import { invalidClient, invalidRequest } from './protocol-error.js';

export function parseTokenRequest<S extends z.ZodType>(schema: S, body: unknown): z.output<S> {
  const r = schema.safeParse(body);
  if (r.success) return r.data;
  const first = r.error.issues[0];
  const where = first === undefined || first.path.length === 0 ? '' : `${first.path.map(String).join('.')}: `;
  throw invalidRequest(`${where}${first?.message ?? 'invalid request'}`);
}

export async function tokenClient(ctx: ServiceContext, clientId: string): Promise<ClientView> {
  try {
    return await enabledClient(ctx, clientId);
  } catch (err) {
    if (err instanceof AppError && err.code === 'BCK.OAUTH.0016') throw invalidClient('unknown or disabled client');
    throw err;
  }
}

/** A grant's token request: its body parsed, and the public client it names known and enabled. */
export async function clientRequest<S extends z.ZodType<{ client_id: string }>>(
  ctx: ServiceContext,
  schema: S,
  body: unknown,
): Promise<z.output<S>> {
  const req = parseTokenRequest(schema, body);
  await tokenClient(ctx, req.client_id);
  return req;
}
