// The part of an EIP-3009 token (Circle's FiatToken v2 and the test token in contracts/) payroute calls on chain.
import { parseAbi } from 'viem';

export const EIP3009_TOKEN_ABI = parseAbi([
  'function balanceOf(address account) view returns (uint256)',
  'function authorizationState(address authorizer, bytes32 nonce) view returns (bool)',
  'function transferWithAuthorization(address from, address to, uint256 value, uint256 validAfter, uint256 validBefore, bytes32 nonce, uint8 v, bytes32 r, bytes32 s)',
  'function receiveWithAuthorization(address from, address to, uint256 value, uint256 validAfter, uint256 validBefore, bytes32 nonce, uint8 v, bytes32 r, bytes32 s)',
  // EIP-3009: emitted once per authorization, by the transfer that used it (or by its cancellation's own event).
  'event AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce)',
  'event Transfer(address indexed from, address indexed to, uint256 value)',
]);
