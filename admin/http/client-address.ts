// Where an admin request came from, for the per-address limits: the address the proxy vouched for
// (shared/client-address.ts), else this process's own TCP peer (a caller on the admin port itself). Koa runs with
// `proxy: false`: X-Forwarded-For is never read here, since anyone reaching this port could write it.
import {
  CLIENT_ADDRESS_HEADER,
  UNKNOWN_ADDRESS,
  normalizeAddress,
  readClientAddress,
} from '../../shared/client-address.js';
import type { SecretBox } from '../../shared/crypto/secrets.js';
import type { AdminRouterContext } from './route.js';

export function requestAddress(c: AdminRouterContext, box: SecretBox): string {
  const header = c.get(CLIENT_ADDRESS_HEADER);
  return (
    (header === '' ? undefined : readClientAddress(box, header)) ??
    normalizeAddress(c.req.socket.remoteAddress) ??
    UNKNOWN_ADDRESS
  );
}
