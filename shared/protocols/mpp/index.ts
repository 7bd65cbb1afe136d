// MPP (HTTP Payment authentication scheme) primitives, one per file, used as namespaces
// (`Challenge.deserializeList(header)`, `Credential.serialize(...)`), as in wevm/mppx.
export * as Challenge from './Challenge.js';
export * as Credential from './Credential.js';
export * as EvmCharge from './EvmCharge.js';
export * as PaymentRequest from './PaymentRequest.js';
export * as Receipt from './Receipt.js';
