// Limits of one outbound call, with their defaults (the proxy passes the ROUTER_* settings). Checked
// when an upstream is created, so a bad value fails at start and names the option.
import { z } from 'zod';

const positiveMs = z.number().int().positive().max(2_147_483_647); // setTimeout's ceiling (2^31 - 1 ms)

export const UpstreamLimitsSchema = z.object({
  /** DNS lookup plus TCP (and TLS) connect, per address tried (ROUTER_CONNECT_TIMEOUT_MS). Default 10 s. */
  connectTimeoutMs: positiveMs.default(10_000),
  /** From the request sent to the status line and headers received (ROUTER_HEADERS_TIMEOUT_MS). Default 30 s. */
  headersTimeoutMs: positiveMs.default(30_000),
  /** Longest silence between two body chunks from the merchant (ROUTER_STREAM_IDLE_MS). Default 30 s. A slow
   *  reader on our side pauses the socket and does not count as silence. */
  bodyTimeoutMs: positiveMs.default(30_000),
  /** Largest answer body relayed or buffered (ROUTER_MAX_RELAY_BYTES). Default 100 MB. */
  maxBodyBytes: z
    .number()
    .int()
    .positive()
    .default(100 * 1024 * 1024),
  /** The whole exchange, body included (ROUTER_STREAM_MAX_MS). Default 5 min. */
  maxTotalMs: positiveMs.default(300_000),
  /** Largest header section (and trailer section) of an answer, names and values counted (undici's
   *  `maxHeaderSize`). Default 16 KiB, undici's and Node's own default: pinned here rather than inherited from
   *  `--max-http-header-size`, which also governs our inbound servers, so the limit and the refusal that names it
   *  cannot drift apart. A base64 x402 PAYMENT-REQUIRED header spends ~300 bytes an option (measured), so ~50
   *  options fit; a merchant sending more is refused, and undici stops reading at the limit. Not a ROUTER_* setting. */
  maxHeaderBytes: z
    .number()
    .int()
    .positive()
    .default(16 * 1024),
});

export type UpstreamLimits = z.output<typeof UpstreamLimitsSchema>;
export type UpstreamLimitsInput = z.input<typeof UpstreamLimitsSchema>;

/** Validates the limits; throws naming every bad option (a programming or configuration error, at start). */
export function parseLimits(input: UpstreamLimitsInput): UpstreamLimits {
  const parsed = UpstreamLimitsSchema.safeParse(input);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join('.')} ${i.message}`);
    throw new Error(`invalid upstream limits: ${problems.join('; ')}`);
  }
  return parsed.data;
}
