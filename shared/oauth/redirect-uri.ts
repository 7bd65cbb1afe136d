// The redirect URIs a client may register. Matching is exact (RFC 6749 §3.1.2.3, RFC 8252 §8.4: no partial or
// pattern matching), so what is registered must be one exact absolute URI:
//   - https, any host;
//   - http only to a loopback host (RFC 8252 §7.3: a native app listening on 127.0.0.1 or [::1]; `localhost` too,
//     which resolves there), since a code sent over plain http to another host can be read on the way;
//   - a private-use scheme in reverse-domain form (RFC 8252 §7.1: `com.example.app:/callback`), for native apps.
// Never a fragment (RFC 6749 §3.1.2: the code is added to the query and a fragment would be dropped or mixed up),
// never userinfo, never a javascript:/data:/file: style scheme (no dot in it).
import { z } from 'zod';

const MAX_LENGTH = 2000;

function hasSpaceOrControl(raw: string): boolean {
  for (let i = 0; i < raw.length; i++) {
    const c = raw.charCodeAt(i);
    if (c <= 0x20 || (c >= 0x7f && c <= 0x9f)) return true;
  }
  return false;
}

/** Why `raw` cannot be registered, or undefined when it can. */
export function redirectUriRefusal(raw: string): string | undefined {
  if (raw.length === 0 || raw.length > MAX_LENGTH) return `must be 1 to ${MAX_LENGTH} characters`;
  // Control characters and spaces would be percent-encoded by the parser: the registered form would not be the
  // string the client sends.
  if (hasSpaceOrControl(raw)) return 'must not contain spaces or control characters';
  const url = URL.parse(raw);
  if (url === null) return 'must be an absolute URI';
  if (url.hash !== '' || raw.includes('#')) return 'must not have a fragment';
  if (url.username !== '' || url.password !== '') return 'must not carry userinfo';
  const scheme = url.protocol.slice(0, -1);
  if (scheme === 'https') return url.hostname === '' ? 'must name a host' : undefined;
  if (scheme === 'http') {
    const host = url.hostname;
    const loopback = host === 'localhost' || host === '[::1]' || /^127(\.[0-9]{1,3}){3}$/.test(host);
    return loopback ? undefined : 'http is allowed only for a loopback host (127.0.0.1, [::1], localhost)';
  }
  if (/^[a-z][a-z0-9+-]*(\.[a-z0-9+-]+)+$/.test(scheme)) return undefined;
  return 'must be https, http to a loopback host, or a private-use scheme such as com.example.app';
}

/** A redirect URI as registered: kept exactly as given. */
export const RedirectUri = z.string().superRefine((raw, ctx) => {
  const why = redirectUriRefusal(raw);
  if (why !== undefined) ctx.addIssue({ code: 'custom', message: why });
});
