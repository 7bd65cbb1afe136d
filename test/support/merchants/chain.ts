// A stub of the only chain the merchants' official payment libraries talk to: the EVM JSON-RPC surface of viem
// clients (getCode, readContract — including Multicall3 `tryAggregate` —, writeContract, waitForTransactionReceipt,
// verifyTypedData), backed by in-memory EIP-3009 tokens that behave like Circle's FiatToken v2
// (`transferWithAuthorization`: valid window, unused nonce, signature under the token's OWN EIP-712 domain,
// balance). It is the lowest level the libraries expose, so every check they make above it still runs: the
// stub only answers what a node would answer. A reused nonce reverts in the simulation (`readContract`) and in
// the transaction (`writeContract`), as on chain.
import secp256k1 from 'secp256k1';
import {
  type Abi,
  type Address,
  type Hex,
  decodeFunctionData,
  encodeAbiParameters,
  encodeEventTopics,
  encodeFunctionResult,
  getAddress,
  hashTypedData,
  hexToBytes,
  isAddressEqual,
  keccak256,
  parseAbi,
  serializeSignature,
  toHex,
  verifyTypedData,
} from 'viem';
import { TRANSFER_WITH_AUTHORIZATION_TYPES, authorizationDomain } from '../../../shared/protocols/eip3009.js';

export const MULTICALL3 = getAddress('0xcA11bde05977b3631167028862bE2a173976CA11');

/** What the libraries call on the token (the union of @x402/evm's and x402@1's USDC ABIs, as far as used). */
export const TOKEN_ABI = parseAbi([
  'function transferWithAuthorization(address from, address to, uint256 value, uint256 validAfter, uint256 validBefore, bytes32 nonce, uint8 v, bytes32 r, bytes32 s)',
  'function transferWithAuthorization(address from, address to, uint256 value, uint256 validAfter, uint256 validBefore, bytes32 nonce, bytes signature)',
  'function authorizationState(address authorizer, bytes32 nonce) view returns (bool)',
  'function balanceOf(address account) view returns (uint256)',
  'function name() view returns (string)',
  'function version() view returns (string)',
  'event Transfer(address indexed from, address indexed to, uint256 value)',
]);

export interface TokenSpec {
  readonly address: string;
  readonly eip712: { readonly name: string; readonly version: string };
}

interface TokenState {
  readonly spec: TokenSpec;
  readonly balances: Map<string, bigint>;
  /** authorizer|nonce -> used (FiatToken `_authorizationStates`). */
  readonly used: Set<string>;
}

/** A Solidity revert as viem surfaces it: an Error whose message carries the reason. */
class Revert extends Error {
  constructor(reason: string) {
    super(`execution reverted: ${reason}`);
    this.name = 'ContractFunctionExecutionError';
  }
}

interface TransferArgs {
  from: Address;
  to: Address;
  value: bigint;
  validAfter: bigint;
  validBefore: bigint;
  nonce: Hex;
  signature: Hex;
}

interface Receipt {
  status: 'success' | 'reverted';
  logs: {
    address: Address;
    topics: Hex[];
    data: Hex;
    blockNumber: bigint;
    logIndex: number;
    transactionHash: Hex;
    transactionIndex: number;
    blockHash: Hex;
    removed: boolean;
  }[];
}

export class StubChain {
  readonly tokens = new Map<string, TokenState>();
  readonly receipts = new Map<string, Receipt>();
  /** Every transferWithAuthorization executed, for assertions. */
  readonly transfers: TransferArgs[] = [];
  private txCounter = 0;

  constructor(
    readonly chainId: number,
    tokens: readonly TokenSpec[],
    readonly facilitator: Address = getAddress('0x00000000000000000000000000000000000fac17'),
  ) {
    for (const spec of tokens)
      this.tokens.set(spec.address.toLowerCase(), { spec, balances: new Map(), used: new Set() });
  }

  mint(token: string, holder: string, amount: bigint): void {
    const t = this.token(token);
    const key = holder.toLowerCase();
    t.balances.set(key, (t.balances.get(key) ?? 0n) + amount);
  }

  balanceOf(token: string, holder: string): bigint {
    return this.token(token).balances.get(holder.toLowerCase()) ?? 0n;
  }

  isUsed(token: string, authorizer: string, nonce: string): boolean {
    return this.token(token).used.has(`${authorizer.toLowerCase()}|${nonce.toLowerCase()}`);
  }

  private token(address: string): TokenState {
    const t = this.tokens.get(address.toLowerCase());
    if (t === undefined) throw new Revert('call to a non-contract');
    return t;
  }

  // --- JSON-RPC surface -------------------------------------------------------------------------------------

  /** eth_getCode: tokens and Multicall3 are contracts; every other address (the payer) is an EOA. */
  async getCode(args: { address: string }): Promise<Hex | undefined> {
    const a = args.address.toLowerCase();
    return this.tokens.has(a) || a === MULTICALL3.toLowerCase() ? '0x6080604052' : '0x';
  }

  /** eth_call. */
  async readContract(args: {
    address: string;
    abi: readonly unknown[];
    functionName: string;
    args?: readonly unknown[];
  }): Promise<unknown> {
    if (args.address.toLowerCase() === MULTICALL3.toLowerCase() && args.functionName === 'tryAggregate') {
      const [, calls] = (args.args ?? []) as [boolean, readonly { target: Address; callData: Hex }[]];
      return calls.map((call) => {
        try {
          return { success: true, returnData: this.callEncoded(call.target, call.callData) };
        } catch {
          return { success: false, returnData: '0x' as Hex };
        }
      });
    }
    return this.call(args.address, args.functionName, args.args ?? [], false);
  }

  /** eth_sendTransaction of a contract call; the transaction is mined at once. */
  async writeContract(args: {
    address: string;
    abi: readonly unknown[];
    functionName: string;
    args: readonly unknown[];
  }): Promise<Hex> {
    this.call(args.address, args.functionName, args.args, true);
    this.txCounter += 1;
    const hash = keccak256(toHex(`stub-tx-${this.chainId}-${this.txCounter}-${Date.now()}`));
    const last = this.transfers[this.transfers.length - 1];
    const logs: Receipt['logs'] = [];
    if (last !== undefined) {
      logs.push({
        address: getAddress(args.address),
        topics: encodeEventTopics({
          abi: TOKEN_ABI,
          eventName: 'Transfer',
          args: { from: last.from, to: last.to },
        }) as Hex[],
        data: encodeAbiParameters([{ type: 'uint256' }], [last.value]),
        blockNumber: 1n,
        logIndex: 0,
        transactionHash: hash,
        transactionIndex: 0,
        blockHash: keccak256(hash),
        removed: false,
      });
    }
    this.receipts.set(hash, { status: 'success', logs });
    return hash;
  }

  async sendTransaction(): Promise<Hex> {
    throw new Error('the stub chain does not deploy smart wallets');
  }

  async waitForTransactionReceipt(args: { hash: string }): Promise<Receipt> {
    const r = this.receipts.get(args.hash);
    if (r === undefined) throw new Error('transaction not found');
    return r;
  }

  /**
   * viem's public `verifyTypedData`: for an EOA the node's answer (through the ERC-6492 universal validator) is
   * ecrecover == address; a signature that does not even recover is `false`, not an error.
   */
  async verifyTypedData(args: Parameters<typeof verifyTypedData>[0]): Promise<boolean> {
    try {
      return await verifyTypedData(args);
    } catch {
      return false;
    }
  }

  getAddresses(): readonly Address[] {
    return [this.facilitator];
  }

  // --- the token ----------------------------------------------------------------------------------------------

  private callEncoded(target: string, data: Hex): Hex {
    const { functionName, args } = decodeFunctionData({ abi: TOKEN_ABI, data });
    const result = this.call(target, functionName, args ?? [], false);
    return encodeFunctionResult({ abi: TOKEN_ABI as Abi, functionName, result } as never);
  }

  private call(address: string, functionName: string, args: readonly unknown[], write: boolean): unknown {
    const t = this.token(address);
    switch (functionName) {
      case 'name':
        return t.spec.eip712.name;
      case 'version':
        return t.spec.eip712.version;
      case 'balanceOf':
        return t.balances.get(String(args[0]).toLowerCase()) ?? 0n;
      case 'authorizationState':
        return t.used.has(`${String(args[0]).toLowerCase()}|${String(args[1]).toLowerCase()}`);
      case 'transferWithAuthorization':
        return this.transferWithAuthorization(t, args, write);
      default:
        throw new Revert(`unknown function ${functionName}`);
    }
  }

  /** FiatTokenV2_2 `transferWithAuthorization` (v, r, s) and the bytes-signature overload. */
  private transferWithAuthorization(t: TokenState, args: readonly unknown[], write: boolean): undefined {
    const [from, to, value, validAfter, validBefore, nonce] = args as [Address, Address, bigint, bigint, bigint, Hex];
    let signature: Hex;
    if (args.length === 9) {
      const [v, r, s] = args.slice(6) as [number | bigint, Hex, Hex];
      signature = serializeSignature({ r, s, v: BigInt(v) });
    } else signature = args[6] as Hex;
    const now = BigInt(Math.floor(Date.now() / 1000));
    if (!(now > validAfter)) throw new Revert('FiatTokenV2: authorization is not yet valid');
    if (!(now < validBefore)) throw new Revert('FiatTokenV2: authorization is expired');
    const usedKey = `${from.toLowerCase()}|${nonce.toLowerCase()}`;
    if (t.used.has(usedKey)) throw new Revert('FiatTokenV2: authorization is used or canceled');
    const signer = recoverSync({ from, to, value, validAfter, validBefore, nonce }, signature, t.spec, this.chainId);
    if (signer === undefined || !isAddressEqual(signer, from)) throw new Revert('FiatTokenV2: invalid signature');
    const balance = t.balances.get(from.toLowerCase()) ?? 0n;
    if (balance < value) throw new Revert('ERC20: transfer amount exceeds balance');
    if (write) {
      t.used.add(usedKey);
      t.balances.set(from.toLowerCase(), balance - value);
      t.balances.set(to.toLowerCase(), (t.balances.get(to.toLowerCase()) ?? 0n) + value);
      this.transfers.push({ from, to, value, validAfter, validBefore, nonce, signature });
    }
    return undefined;
  }
}

const SECP256K1_HALF_N = 0x7fffffffffffffffffffffffffffffff5d576e7357a4501ddfe92f46681b20a0n;

/** ecrecover of the EIP-712 digest under the token's own domain (what `SignatureChecker` does on chain). */
function recoverSync(
  message: { from: Address; to: Address; value: bigint; validAfter: bigint; validBefore: bigint; nonce: Hex },
  signature: Hex,
  token: TokenSpec,
  chainId: number,
): Address | undefined {
  try {
    const digest = hashTypedData({
      domain: authorizationDomain(token, chainId),
      types: TRANSFER_WITH_AUTHORIZATION_TYPES,
      primaryType: 'TransferWithAuthorization',
      message,
    });
    const sig = hexToBytes(signature);
    if (sig.length !== 65) return undefined;
    // OpenZeppelin ECDSA.recover (FiatToken's SignatureChecker): v in {27, 28}, s in the lower half order.
    const v = sig[64] ?? 0;
    if (v !== 27 && v !== 28) return undefined;
    if (BigInt(`0x${Buffer.from(sig.slice(32, 64)).toString('hex')}`) > SECP256K1_HALF_N) return undefined;
    const pub = secp256k1.ecdsaRecover(sig.slice(0, 64), v - 27, hexToBytes(digest), false);
    return getAddress(`0x${keccak256(pub.slice(1)).slice(-40)}`);
  } catch {
    return undefined;
  }
}
