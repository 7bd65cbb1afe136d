// What makes two requests "the same request" for an Idempotency-Key: SHA-256 over the method, the route pattern,
// the path parameters and the body in a canonical form. Canonical so that a client that re-serializes its retry
// (other key order, other white space) is still recognised; numbers keep their lexeme as sent (JSON.parse's
// source text, ES2025 "JSON.parse source text access") so two bodies whose numbers differ past 2^53 never look
// the same.
import { sha256Hex } from '../crypto/hashing.js';
import { exceedsJsonDepth } from '../protocols/json-depth.js';

export interface RequestShape {
  readonly method: string;
  /** The route pattern, e.g. `/api/v1/protocol/plans/:planId/order`. */
  readonly route: string;
  readonly params: Readonly<Record<string, string>>;
  /** The body as received (empty when there is none). */
  readonly rawBody: string;
}

/** A JSON number as it was written. */
class NumberLexeme {
  constructor(readonly source: string) {}
}

type Reviver = (key: string, value: unknown, context?: { source?: string }) => unknown;

const keepNumberLexemes: Reviver = (_key, value, context) =>
  typeof value === 'number' && context?.source !== undefined ? new NumberLexeme(context.source) : value;

function write(v: unknown): string {
  if (v instanceof NumberLexeme) return v.source;
  if (Array.isArray(v)) return `[${v.map(write).join(',')}]`;
  if (typeof v === 'object' && v !== null) {
    const o = v as Record<string, unknown>;
    return `{${Object.keys(o)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${write(o[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v) ?? 'null';
}

/**
 * The body in canonical form: keys sorted, no white space, numbers as written. A body that is not JSON, or nests
 * deeper than any recursive walk may go (shared/protocols/json-depth.ts), is taken byte for byte instead, under
 * its own prefix so the two forms never meet.
 */
export function canonicalBody(raw: string): string {
  if (raw.trim() === '') return '';
  let plain: unknown;
  try {
    plain = JSON.parse(raw);
  } catch {
    return `raw:${raw}`;
  }
  if (exceedsJsonDepth(plain)) return `raw:${raw}`;
  return `json:${write(JSON.parse(raw, keepNumberLexemes as Parameters<typeof JSON.parse>[1]))}`;
}

/** SHA-256 (hex) of the request's shape. */
export function fingerprint(r: RequestShape): string {
  const params = Object.keys(r.params)
    .sort()
    .map((k) => [k, r.params[k] ?? '']);
  return sha256Hex(JSON.stringify([r.method, r.route, params, canonicalBody(r.rawBody)]));
}
