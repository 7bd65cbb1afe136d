// Name resolution for outbound calls, behind a small port so tests can make any name resolve to any address (and
// so an operator could plug in a resolver of their own). The guard here is the connect-time half of the SSRF
// defence: every address a name resolves to is checked, and the connection is then made to a checked address,
// never by handing the name to the socket layer for a second lookup (that second answer could differ: DNS
// rebinding turns a check-then-connect into a time-of-check/time-of-use race).
import { lookup as dnsLookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { z } from 'zod';
import { classifyIp } from './address-policy.js';
import { type FailureReason, REASON } from './reasons.js';

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** The resolver port: every address a hostname resolves to, in the order to try them. */
export interface Resolver {
  lookup(hostname: string): Promise<ResolvedAddress[]>;
}

/** The system resolver (getaddrinfo: /etc/hosts, then DNS), all addresses, in the system's preferred order. */
export const systemResolver: Resolver = {
  async lookup(hostname) {
    const answers = await dnsLookup(hostname, { all: true, order: 'verbatim' });
    return answers.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));
  },
};

/** A resolver's answer is untrusted input too (an injected resolver, a hostile /etc/hosts): checked before use. */
const ResolvedAddresses = z
  .array(
    z.object({
      address: z.string().refine((a) => isIP(a) !== 0, 'not an IP address'),
      family: z.union([z.literal(4), z.literal(6)]),
    }),
  )
  .max(64);

const TIMED_OUT: unique symbol = Symbol('lookup timed out');

export type GuardedLookup =
  | { ok: true; addresses: ResolvedAddress[] }
  | { ok: false; kind: 'refused'; reason: string }
  | { ok: false; kind: 'failed'; reason: FailureReason };

/**
 * Resolves `hostname` (or takes an IP literal as is) and checks every address. All must be allowed: if a name
 * answers with one public and one private address, the socket layer might pick either, so the name is refused.
 * With `allowPrivate` only the `always` ranges (cloud metadata, link-local) are refused; the addresses are still
 * returned (and connected to) without a second lookup.
 * The lookup is bounded by `timeoutMs`; never throws.
 */
export async function resolveChecked(
  hostname: string,
  opts: { resolver: Resolver; allowPrivate: boolean; timeoutMs: number },
): Promise<GuardedLookup> {
  const family = isIP(hostname);
  if (family !== 0) {
    // Also with allowPrivate: metadata and link-local literals stay refused (the URL policy said so already; this
    // is the same check where the socket is opened, so no other path to the connector can skip it).
    const verdict = classifyIp(hostname, { allowPrivate: opts.allowPrivate });
    if (!verdict.allowed) {
      const why = verdict.always
        ? 'is never a target, not even with private targets allowed'
        : 'is not a public address';
      return { ok: false, kind: 'refused', reason: `the address ${hostname} ${why}: ${verdict.reason}` };
    }
    return { ok: true, addresses: [{ address: hostname, family: family === 6 ? 6 : 4 }] };
  }

  let answer: unknown;
  let timer: NodeJS.Timeout | undefined;
  try {
    const timeout = new Promise<typeof TIMED_OUT>((resolve) => {
      timer = setTimeout(() => resolve(TIMED_OUT), opts.timeoutMs);
    });
    answer = await Promise.race([opts.resolver.lookup(hostname), timeout]);
  } catch {
    return { ok: false, kind: 'failed', reason: REASON.nameResolution };
  } finally {
    clearTimeout(timer);
  }
  if (answer === TIMED_OUT) return { ok: false, kind: 'failed', reason: REASON.connectTimeout };
  const parsed = ResolvedAddresses.safeParse(answer);
  if (!parsed.success || parsed.data.length === 0) return { ok: false, kind: 'failed', reason: REASON.nameResolution };

  // With allowPrivate every address is still checked, against the `always` ranges only: a name that resolves to
  // 169.254.169.254 (or to any metadata or link-local address, in any of its IPv6 forms) is refused, and so is a
  // name with such an address anywhere in its answer, since the connector may fall through to it.
  for (const { address } of parsed.data) {
    const verdict = classifyIp(address, { allowPrivate: opts.allowPrivate });
    // The resolved address is not echoed: it may be private DNS data of the operator's network.
    if (!verdict.allowed) {
      const what = verdict.always
        ? 'an address that is never a target, not even with private targets allowed'
        : 'a non-public address';
      return { ok: false, kind: 'refused', reason: `the host "${hostname}" resolves to ${what}: ${verdict.reason}` };
    }
  }
  return { ok: true, addresses: parsed.data };
}
