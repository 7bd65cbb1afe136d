// The chain the demo merchants' facilitators talk to: payroute's sandbox token ledger, read from the service's own
// database. In the sandbox the ledger is the chain: when the router signs an EIP-3009 authorization it also moves
// the merchant leg in the ledger at once (there is no facilitator of its own to submit it). So, seen from a
// merchant, an authorization the router gave out and nobody has used yet is money still in the payer's wallet, and
// using it (transferWithAuthorization) is valid only for a transfer the ledger recorded.
//
// The EVM surface the official libraries call (signature under the token's EIP-712 domain, validity window, unused
// nonce, balance) is the test suite's StubChain; this class only keeps its balances equal to the ledger's view.
import { type Address, type Hex, decodeFunctionData, getAddress, isAddress } from 'viem';
import type { SqlTx } from '../shared/db/sql.js';
import { MULTICALL3, StubChain, TOKEN_ABI, type TokenSpec } from '../test/support/merchants/chain.js';

/** A transfer the merchants' facilitators executed, for the demo's log. */
export interface DemoSettlement {
  readonly from: string;
  readonly to: string;
  readonly value: bigint;
  readonly nonce: string;
  readonly paymentId: string;
}

export class LedgerChain extends StubChain {
  readonly settlements: DemoSettlement[] = [];

  constructor(
    private readonly sql: SqlTx,
    chainId: number,
    tokens: readonly TokenSpec[],
    private readonly onSettled: (s: DemoSettlement) => void = () => {},
  ) {
    super(chainId, tokens);
  }

  override async readContract(args: Parameters<StubChain['readContract']>[0]): Promise<unknown> {
    await this.sync(holdersIn(args.address, args.functionName, args.args ?? []));
    return super.readContract(args);
  }

  override async writeContract(args: Parameters<StubChain['writeContract']>[0]): Promise<Hex> {
    if (args.functionName !== 'transferWithAuthorization') return super.writeContract(args);
    const [from, to, value, , , nonce] = args.args as [Address, Address, bigint, bigint, bigint, Hex];
    const paymentId = await this.recordedPayment(to, value, nonce);
    if (paymentId === undefined)
      throw new Error('execution reverted: no router payment in the ledger carries this authorization');
    await this.sync([from]);
    const hash = await super.writeContract(args);
    const s = { from: getAddress(from), to: getAddress(to), value, nonce, paymentId };
    this.settlements.push(s);
    this.onSettled(s);
    return hash;
  }

  /** The payment whose merchant leg this authorization is, while it waits for the merchant's answer (Issued). */
  private async recordedPayment(to: string, value: bigint, nonce: string): Promise<string | undefined> {
    const rows = await this.sql.all(
      `select id from router_payment
       where lower(auth_nonce) = ? and lower(recipient) = ? and cast(amount as text) = ? and status = 'Issued'`,
      [nonce.toLowerCase(), to.toLowerCase(), value.toString()],
    );
    const id = rows[0]?.id;
    return typeof id === 'string' ? id : undefined;
  }

  /**
   * Sets each holder's balance of each token to the ledger's balance plus the merchant legs of its payments still
   * Issued whose authorization this chain has not used: on a chain those would not have left the wallet yet.
   */
  private async sync(holders: readonly string[]): Promise<void> {
    for (const holder of new Set(holders.map((h) => h.toLowerCase()))) {
      for (const [token, state] of this.tokens) {
        const [row] = await this.sql.all(
          'select cast(balance as text) as balance from token_balance where lower(address) = ? and lower(asset) = ?',
          [holder, token],
        );
        let balance = row === undefined ? 0n : BigInt(String(row.balance));
        const pending = await this.sql.all(
          `select p.auth_nonce as nonce, cast(p.amount as text) as amount from router_payment p
           join token_ledger l on l.reference = p.id and l.kind = 'router' and l.delta < 0
           where lower(l.address) = ? and lower(l.asset) = ? and p.status = 'Issued'`,
          [holder, token],
        );
        for (const p of pending) if (!this.isUsed(token, holder, String(p.nonce))) balance += BigInt(String(p.amount));
        state.balances.set(holder, balance);
      }
    }
  }
}

/** The addresses a read asks about: its own arguments, or those of each call a Multicall3 batch carries. */
function holdersIn(target: string, functionName: string, args: readonly unknown[]): string[] {
  if (target.toLowerCase() === MULTICALL3.toLowerCase() && functionName === 'tryAggregate') {
    const calls = (args[1] ?? []) as readonly { callData: Hex }[];
    return calls.flatMap((c) => {
      try {
        return addressesOf(decodeFunctionData({ abi: TOKEN_ABI, data: c.callData }).args ?? []);
      } catch {
        return [];
      }
    });
  }
  return addressesOf(args);
}

const addressesOf = (args: readonly unknown[]): string[] =>
  args.filter((a): a is string => typeof a === 'string' && isAddress(a, { strict: false }));
