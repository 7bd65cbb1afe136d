// The Payment credential (draft-ietf-httpauth-payment §5.2): `Payment <base64url(JSON {challenge, payload,
// source?})>` in the `Authorization` field (or the field the challenge's `header` names).
//
// The challenge is echoed as received: every field keeps the string the server sent and `request` stays the
// original base64url string — never a re-encoding — so what the server HMAC-bound is what comes back. The JSON is
// written exactly as mppx 0.11 `Credential.serialize` writes it after `Challenge.deserialize` (whose zod schema
// orders the fields alphabetically): description, digest, expires, header, id, intent, method, realm, opaque,
// request; then payload; then source. test/protocols/protocols-mpp.test.ts compares our bytes with mppx's.
import { z } from 'zod';
import {
  type Decoded,
  decodeBase64Url,
  decoded,
  encodeBase64Url,
  invalid,
  isJsonObject,
  parseJson,
} from '../encoding.js';
import { ChallengeParams, type PaymentChallenge, fromParams } from './challenge.js';
import { deserialize as deserializeRequest } from './payment-request.js';

/** Largest credential header accepted by `deserialize` (characters). */
export const MAX_CREDENTIAL_CHARS = 32 * 1024;

export interface Credential {
  readonly challenge: PaymentChallenge;
  readonly payload: Readonly<Record<string, unknown>>;
  /** Payer identity, e.g. `did:pkh:eip155:84532:0xAbC...` (mppx `Types.toSource`). */
  readonly source?: string | undefined;
}

/** The challenge as the credential carries it (field order of mppx; absent fields left out). */
function echo(c: PaymentChallenge): Record<string, string> {
  const out: Record<string, string> = {};
  if (c.description !== undefined) out.description = c.description;
  if (c.digest !== undefined) out.digest = c.digest;
  if (c.expires !== undefined) out.expires = c.expires;
  if (c.header !== undefined) out.header = c.header;
  out.id = c.id;
  out.intent = c.intent;
  out.method = c.method;
  out.realm = c.realm;
  if (c.opaque !== undefined) out.opaque = c.opaque;
  out.request = c.request;
  return out;
}

/** `Payment <base64url JSON>` (base64url without padding, RFC 4648 §5). */
export function serialize(credential: Credential): string {
  const wire = {
    challenge: echo(credential.challenge),
    payload: credential.payload,
    ...(credential.source === undefined ? {} : { source: credential.source }),
  };
  return `Payment ${encodeBase64Url(JSON.stringify(wire))}`;
}

const Wire = z.object({
  challenge: ChallengeParams,
  payload: z.record(z.string(), z.unknown()),
  source: z.string().max(1024).optional(),
});

/**
 * Reads a credential (what a merchant does; the router uses it in tests and to inspect what it sent). Scheme
 * name case-insensitive (RFC 9110 §11.1). Never throws.
 */
export function deserialize(header: string): Decoded<Credential> {
  if (typeof header !== 'string') return invalid('not a string');
  if (header.length > MAX_CREDENTIAL_CHARS) return invalid('credential too long');
  const m = /^payment[ \t]+([A-Za-z0-9_=-]+)[ \t]*$/i.exec(header);
  if (m === null || m[1] === undefined) return invalid('not a Payment credential');
  const text = decodeBase64Url(m[1]);
  if (text === undefined) return invalid('credential is not base64url of UTF-8 text');
  const json = parseJson(text);
  if (!json.ok || !isJsonObject(json.value)) return invalid('credential is not a JSON object');
  const parsed = Wire.safeParse(json.value);
  if (!parsed.success) {
    const first = parsed.error.issues[0];
    return invalid(
      first === undefined ? 'invalid credential' : `${first.path.map(String).join('.')}: ${first.message}`,
    );
  }
  const c = parsed.data.challenge;
  const request = deserializeRequest(c.request);
  if (request.type === 'invalid') return invalid(request.reason);
  const challenge = fromParams(c, request.value);
  return decoded({
    challenge,
    // The payload as sent (zod's copy would drop a `__proto__` key).
    payload: json.value.payload as Record<string, unknown>,
    ...(parsed.data.source === undefined ? {} : { source: parsed.data.source }),
  });
}
