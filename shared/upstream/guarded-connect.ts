// The connect step of the outbound undici Agent. Choice: a custom `connect` *function* (not `connect: { lookup }`).
// With `lookup`, node:net skips the hook for IP literals, only offers a callback API, and the injectable resolver
// would have to be adapted to getaddrinfo's two calling conventions; with a connect function every connection, by
// name or by literal, goes through one async check we own:
//   1. resolve the name with the injected Resolver (bounded by the connect timeout),
//   2. refuse unless every address is allowed (address-policy.ts); with allowPrivate, cloud metadata and
//      link-local addresses are still refused here, so a name resolving to 169.254.169.254 never gets a socket,
//   3. hand undici's own connector the checked IP as `hostname`, keeping the name in `host`, so TLS still sends
//      SNI and verifies the certificate against the name (undici derives servername from `host`),
//   4. on a connect error, try the next checked address (a dual-stack name on a host without IPv6 routing).
// The socket layer never sees the name, so it cannot look it up again: no DNS-rebinding window between check and
// connect. Pooled keep-alive connections stay bound to the address that was checked when they were opened.
import { buildConnector } from 'undici';
import { UpstreamFailedError, UpstreamRefusedError } from './outcomes.js';
import { type ResolvedAddress, type Resolver, resolveChecked } from './resolver.js';

export interface GuardedConnectOptions {
  resolver: Resolver;
  /** Opens loopback and private ranges; metadata and link-local stay refused (address-policy.ts). */
  allowPrivate: boolean;
  connectTimeoutMs: number;
  /** Extra trusted CA certificates (PEM) for https targets; the system store is used otherwise. */
  ca?: string | readonly string[] | undefined;
}

/** Errors after which the next resolved address is worth trying (the address, not the name, is the problem). */
const TRY_NEXT = new Set(['ECONNREFUSED', 'ENETUNREACH', 'EHOSTUNREACH', 'EADDRNOTAVAIL', 'UND_ERR_CONNECT_TIMEOUT']);

export function createGuardedConnector(opts: GuardedConnectOptions): buildConnector.connector {
  const base = buildConnector({
    timeout: opts.connectTimeoutMs,
    ...(opts.ca === undefined ? {} : { ca: typeof opts.ca === 'string' ? opts.ca : [...opts.ca] }),
  });

  return (options, callback) => {
    const startedAt = Date.now();
    resolveChecked(options.hostname, {
      resolver: opts.resolver,
      allowPrivate: opts.allowPrivate,
      timeoutMs: opts.connectTimeoutMs,
    }).then(
      (lookup) => {
        if (!lookup.ok) {
          const err =
            lookup.kind === 'refused'
              ? new UpstreamRefusedError(lookup.reason)
              : new UpstreamFailedError(lookup.reason);
          callback(err, null);
          return;
        }
        connectInOrder(lookup.addresses, 0);
      },
      (err: unknown) => callback(err instanceof Error ? err : new Error('lookup failed'), null),
    );

    function connectInOrder(addresses: ResolvedAddress[], index: number): void {
      const target = addresses[index];
      if (target === undefined) return;
      base({ ...options, hostname: target.address }, (err, socket) => {
        if (err === null) {
          if (socket !== null) callback(null, socket);
          return;
        }
        const code = 'code' in err && typeof err.code === 'string' ? err.code : '';
        const budgetLeft = Date.now() - startedAt < opts.connectTimeoutMs;
        if (index + 1 < addresses.length && TRY_NEXT.has(code) && budgetLeft) connectInOrder(addresses, index + 1);
        else callback(err, null);
      });
    }
  };
}
