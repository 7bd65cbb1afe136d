// `WWW-Authenticate: Payment ...` challenges (draft-ietf-httpauth-payment §5.1), parsed with the auth-param
// grammar of RFC 9110 §11.2 and §11.6.1:
//
//   challenge   = auth-scheme [ 1*SP ( token68 / #auth-param ) ]
//   auth-param  = token BWS "=" BWS ( token / quoted-string )
//   token68     = 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"="
//   quoted-string = DQUOTE *( qdtext / quoted-pair ) DQUOTE     (RFC 9110 §5.6.4)
//
// One header value may carry several challenges of several schemes (RFC 9110 §11.6.1: a comma separates both
// parameters and challenges; an element that does not start with `name=` starts a new challenge). We return every
// `Payment` challenge; `Payment` inside a quoted value is data, not a scheme (conformance vector
// `payment_keyword_in_quoted_realm`).
//
// Threats and limits: the scanner is one left-to-right pass with no backtracking and no regular expression over
// unbounded input, so its cost is linear in the header (the conformance vector with 12,000 backslashes in an
// unterminated quoted-string parses in well under a millisecond); the header is refused above MAX_HEADER_CHARS,
// a challenge above MAX_PARAMS parameters, and at most MAX_CHALLENGES challenges are read (later ones are not
// seen), so the per-challenge validation cannot be multiplied by a header of empty challenges; duplicate
// parameter names refuse the challenge (RFC 9110 §11.2: each parameter name MUST only occur once per challenge),
// since two `request`s would let a proxy and a client disagree on what is being paid.
//
// Leniency, following the MPP conformance vectors: unknown parameters are ignored (`unknown_extension_parameter`);
// text after a quoted value up to the next comma is ignored (`unescaped_quotes_in_description`); an unterminated
// quoted-string ends the scan and drops that parameter (`adversarial_unclosed_quoted_extension`). `\uXXXX` inside a
// quoted-string is the character U+XXXX, as mppx writes characters above Latin-1 (its serializer doubles every
// literal backslash, so `\u` followed by four hex digits never comes from anything else).
import { z } from 'zod';
import { type Decoded, decoded, invalid } from '../encoding.js';
import { MAX_REQUEST_CHARS, deserialize as deserializeRequest } from './payment-request.js';

/** Largest header value parsed (characters). */
export const MAX_HEADER_CHARS = 16 * 1024;
/** Most auth-params one challenge may carry. */
export const MAX_PARAMS = 64;
/**
 * Most challenges (of any scheme) read from one header value; the rest of the value is not looked at. Each
 * Payment challenge costs a zod parse and a base64url/JSON decode of its `request`, so without a bound
 * `"Payment,".repeat(2000)` (16 KB) cost 2,000 failing parses (~18 ms of CPU) per 402. mppx writes one challenge
 * per configured method/intent/currency and real servers add at most a Bearer or Basic next to them: a handful.
 * 16 leaves room for several times that while a hostile header costs at most 16 parses, about what a valid
 * multi-challenge header costs. A Payment challenge placed after the 16th is not seen (documented limit).
 */
export const MAX_CHALLENGES = 16;

/** A `Payment` challenge as received: every field the credential must echo, byte for byte. */
export interface PaymentChallenge {
  readonly id: string;
  readonly realm: string;
  readonly method: string;
  readonly intent: string;
  /** The base64url `request` exactly as received: the credential echoes this string, never a re-encoding. */
  readonly request: string;
  /** `request` decoded (a JSON object). */
  readonly requestJson: Readonly<Record<string, unknown>>;
  readonly expires?: string | undefined;
  readonly description?: string | undefined;
  readonly digest?: string | undefined;
  readonly opaque?: string | undefined;
  /** mppx: the field that carries the credential when not `Authorization` (e.g. `Payment-Authorization`). */
  readonly header?: string | undefined;
}

export interface ParsedChallenges {
  readonly challenges: readonly PaymentChallenge[];
  /** Payment challenges present but refused, with why (position among the header's challenges of any scheme). */
  readonly rejected: readonly { readonly index: number; readonly reason: string }[];
}

// ---------------------------------------------------------------------------------------------------------------
// Scanner

interface RawChallenge {
  readonly scheme: string;
  readonly params: Map<string, string>;
  token68: string | undefined;
  error: string | undefined;
}

const SP = 0x20;
const HTAB = 0x09;
const COMMA = 0x2c;
const DQUOTE = 0x22;
const BACKSLASH = 0x5c;
const EQUALS = 0x3d;

/** RFC 9110 §5.6.2 tchar. */
function isTchar(c: number): boolean {
  return (
    (c >= 0x61 && c <= 0x7a) || // a-z
    (c >= 0x41 && c <= 0x5a) || // A-Z
    (c >= 0x30 && c <= 0x39) || // 0-9
    c === 0x21 || // !
    (c >= 0x23 && c <= 0x27) || // # $ % & '
    c === 0x2a || // *
    c === 0x2b || // +
    c === 0x2d || // -
    c === 0x2e || // .
    c === 0x5e || // ^
    c === 0x5f || // _
    c === 0x60 || // `
    c === 0x7c || // |
    c === 0x7e // ~
  );
}

/** RFC 9110 §11.2 token68 characters (before the trailing "="s). */
function isToken68Char(c: number): boolean {
  return (
    (c >= 0x61 && c <= 0x7a) ||
    (c >= 0x41 && c <= 0x5a) ||
    (c >= 0x30 && c <= 0x39) ||
    c === 0x2d ||
    c === 0x2e ||
    c === 0x5f ||
    c === 0x7e ||
    c === 0x2b ||
    c === 0x2f
  );
}

const isHex = (c: number): boolean => (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66);

class Scanner {
  i = 0;
  constructor(readonly s: string) {}

  get done(): boolean {
    return this.i >= this.s.length;
  }
  peek(): number {
    return this.s.charCodeAt(this.i);
  }
  skipWs(): boolean {
    const start = this.i;
    while (this.i < this.s.length) {
      const c = this.peek();
      if (c !== SP && c !== HTAB) break;
      this.i++;
    }
    return this.i > start;
  }
  skipWsAndCommas(): void {
    while (this.i < this.s.length) {
      const c = this.peek();
      if (c !== SP && c !== HTAB && c !== COMMA) break;
      this.i++;
    }
  }
  readWhile(pred: (c: number) => boolean): string {
    const start = this.i;
    while (this.i < this.s.length && pred(this.peek())) this.i++;
    return this.s.slice(start, this.i);
  }

  /**
   * Reads a quoted-string whose opening DQUOTE is at `i`; returns its value, or undefined when it never closes
   * (the scanner is then at the end). Each character is looked at once.
   */
  readQuoted(): string | undefined {
    const s = this.s;
    this.i++; // opening DQUOTE
    const parts: string[] = [];
    let segment = this.i;
    while (this.i < s.length) {
      const c = s.charCodeAt(this.i);
      if (c === DQUOTE) {
        parts.push(s.slice(segment, this.i));
        this.i++;
        return parts.join('');
      }
      if (c === BACKSLASH) {
        parts.push(s.slice(segment, this.i));
        const next = s.charCodeAt(this.i + 1);
        if (Number.isNaN(next)) {
          this.i = s.length;
          return undefined;
        }
        if (
          next === 0x75 && // u
          isHex(s.charCodeAt(this.i + 2)) &&
          isHex(s.charCodeAt(this.i + 3)) &&
          isHex(s.charCodeAt(this.i + 4)) &&
          isHex(s.charCodeAt(this.i + 5))
        ) {
          parts.push(String.fromCharCode(Number.parseInt(s.slice(this.i + 2, this.i + 6), 16)));
          this.i += 6;
        } else {
          parts.push(s[this.i + 1] ?? '');
          this.i += 2;
        }
        segment = this.i;
        continue;
      }
      this.i++;
    }
    return undefined;
  }

  /** Skips the rest of an element up to (not past) the next comma outside a quoted-string. */
  skipToComma(): void {
    const s = this.s;
    let quoted = false;
    while (this.i < s.length) {
      const c = s.charCodeAt(this.i);
      if (quoted) {
        if (c === BACKSLASH) this.i++;
        else if (c === DQUOTE) quoted = false;
      } else if (c === DQUOTE) quoted = true;
      else if (c === COMMA) return;
      this.i++;
    }
  }
}

type ParamRead = { kind: 'param'; name: string; value: string } | { kind: 'unterminated' } | { kind: 'none' };

/** At `name BWS "=" BWS value`: reads one auth-param, or reports that what is here is not one (i unchanged). */
function readParam(sc: Scanner): ParamRead {
  const start = sc.i;
  const name = sc.readWhile(isTchar);
  if (name === '') return { kind: 'none' };
  sc.skipWs();
  if (sc.done || sc.peek() !== EQUALS) {
    sc.i = start;
    return { kind: 'none' };
  }
  sc.i++;
  sc.skipWs();
  if (sc.done || sc.peek() === COMMA || sc.peek() === EQUALS) {
    // `name=` followed by nothing or more "=": the tail of a token68, not a parameter.
    sc.i = start;
    return { kind: 'none' };
  }
  if (sc.peek() === DQUOTE) {
    const value = sc.readQuoted();
    if (value === undefined) return { kind: 'unterminated' };
    return { kind: 'param', name: name.toLowerCase(), value };
  }
  // A bare token. Servers do send unquoted values that are not strictly tokens (`expires=2026-01-29T12:05:00Z`):
  // like mppx, take everything up to the next comma, trimmed.
  const valueStart = sc.i;
  while (!sc.done && sc.peek() !== COMMA) sc.i++;
  return { kind: 'param', name: name.toLowerCase(), value: sc.s.slice(valueStart, sc.i).trim() };
}

function addParam(ch: RawChallenge, name: string, value: string): void {
  if (ch.error !== undefined) return;
  if (ch.params.has(name)) {
    ch.error = `duplicate parameter ${name}`;
    return;
  }
  if (ch.params.size >= MAX_PARAMS) {
    ch.error = `more than ${MAX_PARAMS} parameters`;
    return;
  }
  ch.params.set(name, value);
}

/** Splits a WWW-Authenticate value into challenges of any scheme (RFC 9110 §11.6.1), in one pass. */
function scan(header: string): RawChallenge[] {
  const sc = new Scanner(header);
  const out: RawChallenge[] = [];
  let current: RawChallenge | undefined;
  while (true) {
    sc.skipWsAndCommas();
    if (sc.done) break;
    // An element is either `name=value` (a parameter of the current challenge) or `scheme [...]` (a new one).
    const param = readParam(sc);
    if (param.kind === 'unterminated') break;
    if (param.kind === 'param') {
      if (current !== undefined) addParam(current, param.name, param.value);
      sc.skipToComma();
      continue;
    }
    const scheme = sc.readWhile(isTchar);
    if (scheme === '') {
      sc.skipToComma(); // not a token: garbage up to the next element
      continue;
    }
    if (out.length >= MAX_CHALLENGES) break; // bounded work: the rest of the header is not read
    current = { scheme, params: new Map(), token68: undefined, error: undefined };
    out.push(current);
    const hadSpace = sc.skipWs();
    if (sc.done || sc.peek() === COMMA) continue;
    if (!hadSpace) {
      current.error = 'malformed challenge';
      sc.skipToComma();
      continue;
    }
    const first = readParam(sc);
    if (first.kind === 'unterminated') break;
    if (first.kind === 'param') {
      addParam(current, first.name, first.value);
      sc.skipToComma();
      continue;
    }
    const token68 = sc.readWhile(isToken68Char);
    const padding = sc.readWhile((c) => c === EQUALS);
    sc.skipWs();
    if (token68 !== '' && (sc.done || sc.peek() === COMMA)) current.token68 = token68 + padding;
    else {
      current.error = 'malformed challenge';
      sc.skipToComma();
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------------------
// Payment challenge fields (draft-ietf-httpauth-payment §5.1; mppx Challenge.Schema)

/** RFC 3339 date-time, as `expires` is written (mppx `z.datetime()`). */
const DATETIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/;

export const ChallengeParams = z.object({
  id: z.string().min(1).max(1024),
  realm: z.string().max(1024),
  // mppx: method names are lowercase per spec.
  method: z
    .string()
    .max(64)
    .regex(/^[a-z][a-z0-9:_-]*$/, 'method must be lowercase'),
  intent: z.string().max(64),
  request: z.string().max(MAX_REQUEST_CHARS),
  expires: z
    .string()
    .max(64)
    .refine((v) => DATETIME.test(v) && Number.isFinite(Date.parse(v)), 'expires must be an RFC 3339 date-time')
    .optional(),
  description: z.string().max(4096).optional(),
  digest: z
    .string()
    .max(512)
    .regex(/^sha-256=/, 'digest must be sha-256=...')
    .optional(),
  opaque: z.string().max(4096).optional(),
  header: z
    .string()
    .max(64)
    .regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/, 'header must be a field name')
    .optional(),
});

function toPaymentChallenge(raw: RawChallenge): { ok: true; value: PaymentChallenge } | { ok: false; reason: string } {
  if (raw.error !== undefined) return { ok: false, reason: raw.error };
  if (raw.token68 !== undefined) return { ok: false, reason: 'a Payment challenge carries auth-params, not a token68' };
  const parsed = ChallengeParams.safeParse(Object.fromEntries(raw.params));
  if (!parsed.success) {
    const first = parsed.error.issues[0];
    return {
      ok: false,
      reason: first === undefined ? 'invalid' : `${first.path.map(String).join('.')}: ${first.message}`,
    };
  }
  const request = deserializeRequest(parsed.data.request);
  if (request.type === 'invalid') return { ok: false, reason: request.reason };
  return { ok: true, value: fromParams(parsed.data, request.value) };
}

/** A PaymentChallenge from validated parameters and the decoded request (absent optional fields left out). */
export function fromParams(p: z.infer<typeof ChallengeParams>, requestJson: Record<string, unknown>): PaymentChallenge {
  return {
    id: p.id,
    realm: p.realm,
    method: p.method,
    intent: p.intent,
    request: p.request,
    requestJson,
    ...(p.expires === undefined ? {} : { expires: p.expires }),
    ...(p.description === undefined ? {} : { description: p.description }),
    ...(p.digest === undefined ? {} : { digest: p.digest }),
    ...(p.opaque === undefined ? {} : { opaque: p.opaque }),
    ...(p.header === undefined ? {} : { header: p.header }),
  };
}

/**
 * Every `Payment` challenge of a WWW-Authenticate value. `invalid` when the value is too long or carries no usable
 * Payment challenge (the reason of the first refused one, if any). Never throws.
 */
export function deserializeList(header: string): Decoded<ParsedChallenges> {
  if (typeof header !== 'string') return invalid('not a string');
  if (header.length > MAX_HEADER_CHARS)
    return invalid(`WWW-Authenticate is longer than ${MAX_HEADER_CHARS} characters`);
  const challenges: PaymentChallenge[] = [];
  const rejected: { index: number; reason: string }[] = [];
  scan(header).forEach((raw, index) => {
    if (raw.scheme.toLowerCase() !== 'payment') return;
    const c = toPaymentChallenge(raw);
    if (c.ok) challenges.push(c.value);
    else rejected.push({ index, reason: c.reason });
  });
  if (challenges.length === 0) return invalid(rejected[0]?.reason ?? 'no Payment challenge');
  return decoded({ challenges, rejected });
}

/** The first `Payment` challenge (mppx `Challenge.deserialize`). */
export function deserialize(header: string): Decoded<PaymentChallenge> {
  const list = deserializeList(header);
  if (list.type === 'invalid') return list;
  const [first] = list.value.challenges;
  return first === undefined ? invalid('no Payment challenge') : decoded(first);
}

// ---------------------------------------------------------------------------------------------------------------
// Formatting (test merchants and conformance vectors; the router only echoes)

/** One auth-param as mppx writes it: quoted, `\` and `"` escaped, characters above Latin-1 as `\uXXXX`. */
function authParam(name: string, value: string): string {
  if (/[\r\n]/.test(value)) throw new Error('a quoted-string cannot carry CR or LF');
  const escaped = value
    .replace(/\\/g, '\\\\')
    .replace(/"/g, '\\"')
    .replace(/[\u0100-\uffff]/g, (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`);
  return `${name}="${escaped}"`;
}

/** `Payment id=..., realm=..., method=..., intent=..., request=...[, description, digest, expires, header, opaque]`. */
export function serialize(c: Omit<PaymentChallenge, 'requestJson'>): string {
  const parts = [
    authParam('id', c.id),
    authParam('realm', c.realm),
    authParam('method', c.method),
    authParam('intent', c.intent),
    authParam('request', c.request),
  ];
  if (c.description !== undefined) parts.push(authParam('description', c.description));
  if (c.digest !== undefined) parts.push(authParam('digest', c.digest));
  if (c.expires !== undefined) parts.push(authParam('expires', c.expires));
  if (c.header !== undefined) parts.push(authParam('header', c.header));
  if (c.opaque !== undefined) parts.push(authParam('opaque', c.opaque));
  return `Payment ${parts.join(', ')}`;
}
