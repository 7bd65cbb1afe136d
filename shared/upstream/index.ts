// The outbound-HTTP module: the only place in the project that opens connections to merchants.
export { type AddressVerdict, type ClassifyOptions, classifyIp } from './address-policy.js';
export {
  type Upstream,
  type UpstreamOptions,
  type UpstreamRequest,
  type UpstreamResponse,
  type UpstreamResult,
  type UpstreamStreamResult,
  createUpstream,
} from './client.js';
export {
  type IncomingHeaders,
  type OutgoingHeaders,
  type CredentialHeader,
  credentialHeaderRefusal,
  scrubRequestHeaders,
  scrubResponseHeaders,
} from './headers.js';
export { type UpstreamLimits, UpstreamLimitsSchema } from './limits.js';
export { type Failed, type Refused, UpstreamStreamError } from './outcomes.js';
export { type FailureReason, REASON, headersTooLarge } from './reasons.js';
export { type ResolvedAddress, type Resolver, systemResolver } from './resolver.js';
export { upstreamAppError } from './to-app-error.js';
export { MAX_URL_LENGTH, type TargetUrl, parseTargetUrl } from './url-policy.js';
