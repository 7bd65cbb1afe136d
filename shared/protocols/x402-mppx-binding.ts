// The mppx route binding of an x402 v2 payment (what an mppx merchant advertising x402 checks).
import { createHash } from 'node:crypto';
import type { Hex } from 'viem';
import { randomNonce } from './eip3009.js';
import { isJsonObject } from './encoding.js';
import { serialize as serializeRequest } from './mpp/payment-request.js';
import type { Extensions, OfferedOption, ResourceInfo } from './x402-schemas.js';

/**
 * mppx's route binding of an x402 payment (mppx x402/client/Exact.ts `withNonceSalt`, x402/internal/RouteBinding.ts,
 * checked by x402/server/EvmCharge.ts `bindCredential`): a v2 offer whose `extensions` carry `mppx` (an mppx merchant
 * advertising x402) is answered as mppx's own client answers it. `extensions.mppx.info.nonce` gets a random 32-byte
 * salt; `resource` is `{ url }`; and the EIP-3009 nonce is sha256(base64url(JCS(accepted)) | ...(resource) |
 * ...(extensions)), which binds the authorization to that route. An mppx merchant checks the binding whenever it is
 * present, and on scoped routes with `routeBinding: 'required'` refuses a payment without it. The salt keeps the
 * nonce unpredictable and unique, as a random one is. Undefined for any other offer (extensions echoed verbatim).
 */
export function mppxRouteBinding(
  accepted: OfferedOption,
  resource: ResourceInfo | undefined,
  extensions: Extensions | undefined,
): { nonce: Hex; resource: ResourceInfo; extensions: Extensions } | undefined {
  const mppx = extensions?.mppx;
  if (extensions === undefined || resource === undefined || !isJsonObject(mppx) || !isJsonObject(mppx.info))
    return undefined;
  // mppx hashes the extensions as its schema parses them (unknown keys stripped): bind only the exact shape it
  // advertises ({ mppx: { info, schema } }); anything else is echoed verbatim and unbound, as before.
  if (Object.keys(extensions).length !== 1 || Object.keys(mppx).some((k) => k !== 'info' && k !== 'schema'))
    return undefined;
  const salted: Extensions = {
    ...extensions,
    mppx: { ...mppx, info: { ...mppx.info, nonce: randomNonce().slice(2) } },
  };
  const bound = { url: resource.url };
  const input = [serializeRequest(accepted), serializeRequest(bound), serializeRequest(salted)].join('|');
  return {
    nonce: `0x${createHash('sha256').update(input, 'utf8').digest('hex')}`,
    resource: bound,
    extensions: salted,
  };
}
