// The request method a caller may have relayed. Methods are case-sensitive tokens (RFC 9110 §9.1) and are passed
// on as written; two are refused because of what they do through a proxy.
import { z } from 'zod';

const REFUSED_METHODS: Readonly<Record<string, string>> = {
  CONNECT: 'CONNECT opens a tunnel (RFC 9110 §9.3.6): the router relays requests, it is not a tunnel',
  TRACE: 'TRACE reflects the request back, headers included (RFC 9110 §9.3.8): an XST vector',
  TRACK: 'TRACK is the IIS spelling of TRACE',
};

export const UpstreamMethod = z
  .string()
  .min(1)
  .max(32)
  .regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/, 'the method is not a token (RFC 9110 §9.1)');

export function checkMethod(method: unknown): { ok: true; method: string } | { ok: false; reason: string } {
  const parsed = UpstreamMethod.safeParse(method);
  if (!parsed.success) return { ok: false, reason: 'the request method is not valid' };
  const refusal = REFUSED_METHODS[parsed.data.toUpperCase()];
  if (refusal !== undefined) return { ok: false, reason: `the method ${parsed.data} is not allowed: ${refusal}` };
  return { ok: true, method: parsed.data };
}
