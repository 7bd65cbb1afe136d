// The one way payroute talks to a chain: viem clients on the operator-configured JSON-RPC URL of the environment's
// network (never a URL from a caller). Reads are bounded by CHAIN_RPC_TIMEOUT_MS and retried with backoff (they are
// idempotent); a transaction is sent once (a retry could not make it twice, since its nonce fixes it, but a second
// send of a mined transaction answers an error that would hide the first's success).
import {
  type Address,
  BaseError,
  type Hex,
  type PublicClient,
  type LocalAccount,
  type Transport,
  createPublicClient,
  createWalletClient,
  InsufficientFundsError,
  ContractFunctionRevertedError,
  parseSignature,
  parseAbi,
  encodeFunctionData,
  defineChain,
  http,
  parseEventLogs,
} from 'viem';
import { keyedSerializer } from '../../serial.js';
import { EIP3009_TOKEN_ABI } from './token-abi.js';
import { InvariantError } from '../../errors/invariant.js';

/** The chain could not be read or written (unreachable, timed out, an error answer): a 503 to the caller. */
export class ChainUnavailable extends Error {
  constructor(
    readonly operation: string,
    cause: unknown,
  ) {
    super(
      `${operation}: ${cause instanceof BaseError ? cause.shortMessage : cause instanceof Error ? cause.message : String(cause)}`,
    );
  }
}

/** An AuthorizationUsed event: which transaction used an EIP-3009 authorization, and in which block. */
export interface AuthorizationUse {
  readonly txHash: Hex;
  readonly blockNumber: bigint;
}

/** A mined transaction, as far as settling a payment needs it. */
export interface MinedTransaction {
  readonly status: 'success' | 'reverted';
  readonly blockNumber: bigint;
  /** The AuthorizationUsed events it emitted, with the token that emitted each. */
  readonly authorizations: readonly { token: Address; authorizer: Address; nonce: Hex }[];
}

export interface ChainClient {
  readonly chainId: number;
  /** The newest block's number and time (seconds): an authorization is expired once a block's time reaches its validBefore. */
  latestBlock(): Promise<{ number: bigint; timestamp: bigint }>;
  balanceOf(token: Address, holder: Address, blockNumber: bigint): Promise<bigint>;
  authorizationUsed(token: Address, authorizer: Address, nonce: Hex, blockNumber: bigint): Promise<boolean>;
  /** The AuthorizationUsed event of (authorizer, nonce) between two blocks, if any. */
  findAuthorizationUse(
    token: Address,
    authorizer: Address,
    nonce: Hex,
    fromBlock: bigint,
    toBlock: bigint,
  ): Promise<AuthorizationUse | undefined>;
  /** undefined: no such transaction mined (unknown hash, or still pending). */
  minedTransaction(hash: Hex): Promise<MinedTransaction | undefined>;
  /**
   * The operator (`account`, which pays the gas) submits EIP-3009 transfers signed by their payer, all in one
   * transaction, and waits for it to be mined. Throws OperatorCannotPay (no gas), TransferRefused (it would revert, or did) or ChainUnavailable.
   */
  submitTransfers(
    account: LocalAccount,
    transfers: readonly SignedTransfer[],
    confirmTimeoutMs: number,
  ): Promise<AuthorizationUse>;
  readonly publicClient: PublicClient<Transport>;
}

/** An EIP-3009 authorization signed by its payer (`from`), for `transferWithAuthorization` on `token`. */
export interface SignedTransfer {
  readonly token: Address;
  readonly from: Address;
  readonly to: Address;
  readonly value: bigint;
  readonly validAfter: bigint;
  readonly validBefore: bigint;
  readonly nonce: Hex;
  readonly signature: Hex;
}

/** The operator wallet holds too little of the chain's coin to pay the gas: nothing was sent. */
export class OperatorCannotPay extends Error {}

/** The transfer reverts (in the node's estimate, before sending) or reverted when mined: it moved nothing. */
export class TransferRefused extends Error {
  constructor(
    readonly reason: string,
    readonly txHash?: Hex,
  ) {
    super(reason);
  }
}

/** Multicall3 (github.com/mds1/multicall): deployed at this address on Base, Base Sepolia and most EVM chains. */
export const MULTICALL3 = '0xcA11bde05977b3631167028862bE2a173976CA11' as const;
const MULTICALL3_ABI = parseAbi([
  'struct Call3 { address target; bool allowFailure; bytes callData; }',
  'struct Result { bool success; bytes returnData; }',
  'function aggregate3(Call3[] calls) payable returns (Result[] returnData)',
]);

function transferArgs(t: SignedTransfer) {
  const { r, s, v, yParity } = parseSignature(t.signature);
  return [
    t.from,
    t.to,
    t.value,
    t.validAfter,
    t.validBefore,
    t.nonce,
    Number(v ?? BigInt(yParity + 27)),
    r,
    s,
  ] as const;
}

/** Public RPC providers cap eth_getLogs ranges (commonly 10,000 blocks); ranges are read in steps below that. */
const LOG_RANGE = 5000n;

export function createChainClient(opts: { chainId: number; rpcUrl: string; timeoutMs: number }): ChainClient {
  const chain = defineChain({
    id: opts.chainId,
    name: `eip155:${opts.chainId}`,
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [opts.rpcUrl] } },
  });
  const publicClient = createPublicClient({
    chain,
    // batch: false keeps each request its own, so a timeout names one read; retryDelay grows exponentially.
    transport: http(opts.rpcUrl, { timeout: opts.timeoutMs, retryCount: 3, retryDelay: 150 }),
  });
  // Sends are never retried by the transport (see the file's opening); one send at a time per operator address in
  // this process, so two do not take the same account nonce from the node.
  const wallet = createWalletClient({
    chain,
    transport: http(opts.rpcUrl, { timeout: opts.timeoutMs, retryCount: 0 }),
  });
  const sends = keyedSerializer();
  const guarded = async <T>(operation: string, read: () => Promise<T>): Promise<T> => {
    try {
      return await read();
    } catch (err) {
      throw new ChainUnavailable(operation, err);
    }
  };
  return {
    chainId: opts.chainId,
    publicClient,
    latestBlock: () =>
      guarded('eth_getBlockByNumber', async () => {
        const b = await publicClient.getBlock({ blockTag: 'latest' });
        if (b.number === null) throw new InvariantError('the latest block has no number');
        return { number: b.number, timestamp: b.timestamp };
      }),
    balanceOf: (token, holder, blockNumber) =>
      guarded('balanceOf', () =>
        publicClient.readContract({
          address: token,
          abi: EIP3009_TOKEN_ABI,
          functionName: 'balanceOf',
          args: [holder],
          blockNumber,
        }),
      ),
    authorizationUsed: (token, authorizer, nonce, blockNumber) =>
      guarded('authorizationState', () =>
        publicClient.readContract({
          address: token,
          abi: EIP3009_TOKEN_ABI,
          functionName: 'authorizationState',
          args: [authorizer, nonce],
          blockNumber,
        }),
      ),
    findAuthorizationUse: (token, authorizer, nonce, fromBlock, toBlock) =>
      guarded('eth_getLogs', async () => {
        for (let start = fromBlock; start <= toBlock; start += LOG_RANGE) {
          const end = start + LOG_RANGE - 1n < toBlock ? start + LOG_RANGE - 1n : toBlock;
          const logs = await publicClient.getContractEvents({
            address: token,
            abi: EIP3009_TOKEN_ABI,
            eventName: 'AuthorizationUsed',
            args: { authorizer, nonce },
            fromBlock: start,
            toBlock: end,
          });
          const log = logs.find((l) => !l.removed && l.transactionHash !== null && l.blockNumber !== null);
          if (log?.transactionHash != null && log.blockNumber != null)
            return { txHash: log.transactionHash, blockNumber: log.blockNumber };
        }
        return undefined;
      }),
    submitTransfers: (account, transfers, confirmTimeoutMs) =>
      sends(account.address, async () => {
        const [only] = transfers;
        if (only === undefined) throw new InvariantError('no transfer to submit');
        let hash: Hex;
        try {
          hash =
            transfers.length === 1
              ? await wallet.writeContract({
                  account,
                  address: only.token,
                  abi: EIP3009_TOKEN_ABI,
                  functionName: 'transferWithAuthorization',
                  args: transferArgs(only),
                })
              : // Several receivers in ONE transaction (Multicall3, at the same address on Base and Base Sepolia),
                // none allowed to fail: all are paid or none is. transferWithAuthorization does not look at its
                // caller, so going through Multicall3 changes nothing the token checks.
                await wallet.writeContract({
                  account,
                  address: MULTICALL3,
                  abi: MULTICALL3_ABI,
                  functionName: 'aggregate3',
                  args: [
                    transfers.map((t) => ({
                      target: t.token,
                      allowFailure: false,
                      callData: encodeFunctionData({
                        abi: EIP3009_TOKEN_ABI,
                        functionName: 'transferWithAuthorization',
                        args: transferArgs(t),
                      }),
                    })),
                  ],
                });
        } catch (err) {
          if (err instanceof BaseError) {
            if (err.walk((e) => e instanceof InsufficientFundsError) !== null)
              throw new OperatorCannotPay(`operator wallet ${account.address} cannot pay the gas`);
            const revert = err.walk((e) => e instanceof ContractFunctionRevertedError);
            if (revert instanceof ContractFunctionRevertedError)
              throw new TransferRefused(revert.reason ?? revert.shortMessage);
          }
          throw new ChainUnavailable('eth_sendRawTransaction', err);
        }
        const receipt = await guarded('eth_getTransactionReceipt', () =>
          publicClient.waitForTransactionReceipt({
            hash,
            timeout: confirmTimeoutMs,
            // viem polls every 4 s by default: longer than a short confirmation budget, so a receipt that arrives
            // just after the first poll would be reported as a timeout. A tenth of the budget, within 100 ms..1 s.
            pollingInterval: Math.max(100, Math.min(1000, Math.floor(confirmTimeoutMs / 10))),
          }),
        );
        if (receipt.status !== 'success') throw new TransferRefused('the transaction reverted', hash);
        return { txHash: hash, blockNumber: receipt.blockNumber };
      }),
    minedTransaction: (hash) =>
      guarded('eth_getTransactionReceipt', async () => {
        const receipt = await publicClient.getTransactionReceipt({ hash }).catch((err: unknown) => {
          // viem's "not found" (unknown or pending transaction) is an answer, not an outage.
          if (err instanceof BaseError && err.name === 'TransactionReceiptNotFoundError') return undefined;
          throw err;
        });
        if (receipt === undefined) return undefined;
        const events = parseEventLogs({ abi: EIP3009_TOKEN_ABI, eventName: 'AuthorizationUsed', logs: receipt.logs });
        return {
          status: receipt.status,
          blockNumber: receipt.blockNumber,
          authorizations: events.map((e) => ({ token: e.address, authorizer: e.args.authorizer, nonce: e.args.nonce })),
        };
      }),
  };
}
