// Shared fixtures of the router end-to-end tests: the official-library merchants on one stub chain, small
// hand-written merchants for the odd cases (402 again, redirects, slow or streaming answers), and helpers that
// fund a user in the internal token ledger (and on the stub chain the merchants verify against) and create a
// delegation.
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { getAddress } from 'viem';
import { DelegationTransaction, Delegation, RouterPayment, TokenLedger } from '../../shared/db/entities/index.js';
import { decodePaymentRequiredV2 } from '../../shared/protocols/x402-decode.js';
import { balanceOf, faucet } from '../../shared/settlement/token-ledger.js';
import { StubChain } from './merchants/chain.js';
import { MERCHANT_MPP, MERCHANT_V1, MERCHANT_V2, assetOf } from './merchants/fixtures.js';
import { type Running, listen } from './merchants/listen.js';
import { type MppxMerchant, startMppxMerchant } from './merchants/mppx.js';
import { type X402V1Merchant, startX402V1Merchant } from './merchants/x402-v1.js';
import { type X402V2Merchant, startX402V2Merchant } from './merchants/x402-v2.js';
import type { Stack } from './stack.js';

export const USDC = assetOf('sandbox', 'USDC');
export const EURC = assetOf('sandbox', 'EURC');
export const CHAIN_ID = 84532;
/** The fee recipient every router stack of the tests is started with. */
export const FEE_RECIPIENT = getAddress('0x00000000000000000000000000000000000FEE01');

/** Env of a stack whose proxy may reach the 127.0.0.1 merchants. */
export const PAID_ENV = {
  ROUTER_ALLOW_PRIVATE_TARGETS: 'true',
  ROUTER_MAX_CONCURRENT_PER_USER: '1000',
  ROUTER_FEE_RECIPIENT: FEE_RECIPIENT,
} as const;

/**
 * PAID_ENV for the races: the merchants answer from the test process, which also runs the many clients, so on a
 * loaded machine (CI saw a load of 10 on 2 cores) an answer can take longer than the proxy's default upstream
 * timeouts (10 s connect, 30 s headers and between body chunks) and the call would end in 502 BCK.HTTP.0502 rather
 * than 200 or 402. The timeouts only bound a failure, so they are generous here.
 */
export const RACE_ENV = {
  ...PAID_ENV,
  ROUTER_CONNECT_TIMEOUT_MS: '60000',
  ROUTER_HEADERS_TIMEOUT_MS: '120000',
  ROUTER_STREAM_IDLE_MS: '120000',
};

export type User = Awaited<ReturnType<Stack['user']>>;

/** Funds a user's custodial wallet in the ledger (what the router spends) and on the merchants' stub chain. */
export async function fund(
  stack: Stack,
  chain: StubChain | undefined,
  user: { walletAddress: string },
  amount: bigint,
  asset = USDC,
): Promise<void> {
  await faucet(stack.ctx, user.walletAddress, asset.address, amount);
  chain?.mint(asset.address, user.walletAddress, amount);
}

/** A new user of the stack, funded with `amount` (the ledger and the merchants' chain). */
export async function fundedUser(stack: Stack, chain: StubChain | undefined, amount: bigint): Promise<User> {
  const u = await stack.user();
  await fund(stack, chain, u, amount);
  return u;
}

/** A new user funded with `amount`, and an erc4337 delegation of theirs capped at `limitCents`. */
export async function payingUser(
  stack: Stack,
  chain: StubChain | undefined,
  amount: bigint,
  limitCents: number,
): Promise<{ u: User; delegationId: string }> {
  const u = await fundedUser(stack, chain, amount);
  return { u, delegationId: await createDelegation(u, limitCents) };
}

export async function ledgerBalance(stack: Stack, address: string, asset = USDC): Promise<bigint> {
  return balanceOf(stack.ctx, getAddress(address), asset.address);
}

export async function createDelegation(
  user: User,
  spendingLimitCents: number | string,
  extra: Record<string, unknown> = {},
): Promise<string> {
  const r = await user.api.post('/delegation/create', {
    provider: 'erc4337',
    spendingLimitCents,
    durationSecs: 3600,
    ...extra,
  });
  if (r.status !== 201) throw new Error(`delegation/create: ${r.status} ${r.text}`);
  return r.body.delegationId as string;
}

export async function delegationRow(stack: Stack, id: string) {
  return stack.ctx.db.em().findOneOrFail(Delegation, { id });
}

export async function delegationTransactions(stack: Stack, id: string) {
  return stack.ctx.db.em().find(DelegationTransaction, { delegationId: id }, { orderBy: { createdAt: 'asc' } });
}

export async function paymentRow(stack: Stack, id: string) {
  return stack.ctx.db.em().findOne(RouterPayment, { id });
}

export async function paymentRows(stack: Stack, userId: string) {
  return stack.ctx.db.em().find(RouterPayment, { userId });
}

/**
 * Every ledger move of one payment as [kind, from, to, amount]: each credit row paired with the debit of the same
 * transfer (same txId and kind, opposite delta); '?' where no debit matches.
 */
export async function ledgerMoves(stack: Stack, paymentId: string): Promise<[string, string, string, bigint][]> {
  const rows = await stack.ctx.db.em().find(TokenLedger, { reference: paymentId }, { orderBy: { kind: 'asc' } });
  const out: [string, string, string, bigint][] = [];
  for (const r of rows.filter((x) => x.delta > 0n)) {
    const from = rows.find((x) => x.txId === r.txId && x.kind === r.kind && x.delta === -r.delta);
    out.push([r.kind, from?.address ?? '?', r.address, r.delta]);
  }
  return out;
}

export interface Merchants {
  readonly chain: StubChain;
  readonly v2: X402V2Merchant;
  readonly v1: X402V1Merchant;
  readonly mpp: MppxMerchant;
  close(): Promise<void>;
}

/** The three official-library merchants at `usdcAmount` atomic (the MPP one at the same price). */
export async function startMerchants(
  usdcAmount = 10_000n,
  chain = new StubChain(CHAIN_ID, [USDC, EURC]),
): Promise<Merchants> {
  const v2 = await startX402V2Merchant({
    chain,
    payTo: MERCHANT_V2,
    usdcAmount: usdcAmount.toString(),
    usdc: USDC,
    eurc: EURC,
  });
  const v1 = await startX402V1Merchant({ chain, payTo: MERCHANT_V1, usdcAmount: usdcAmount.toString(), usdc: USDC });
  const display = (Number(usdcAmount) / 1e6).toFixed(6).replace(/0+$/, '').replace(/\.$/, '');
  const mpp = await startMppxMerchant({ chain, recipient: MERCHANT_MPP, amount: display });
  return {
    chain,
    v2,
    v1,
    mpp,
    close: async () => {
      await Promise.all([v2.close(), v1.close(), mpp.close()]);
    },
  };
}

/** The mode A target of the v2 merchant's paid path: the options of its 402. */
export async function v2Target(v2: X402V2Merchant): Promise<Record<string, unknown>> {
  const r = await fetch(v2.url + v2.paidPath);
  const pr = decodePaymentRequiredV2(r.headers.get('payment-required') ?? '');
  if (pr.type !== 'decoded') throw new Error(pr.reason);
  return { accepts: pr.value.accepts };
}

export interface ScriptedMerchant extends Running {
  /** Headers of every request received, oldest first. */
  readonly seen: IncomingHttpHeaders[];
}

/** A plain node:http merchant whose answers the test writes; it records the request headers it saw. */
export async function scriptedMerchant(
  handler: (req: IncomingMessage, res: ServerResponse, n: number) => void | Promise<void>,
): Promise<ScriptedMerchant> {
  const seen: IncomingHttpHeaders[] = [];
  const running = await listen((req, res) => {
    seen.push(req.headers);
    Promise.resolve(handler(req, res, seen.length)).catch((err: unknown) => {
      if (!res.headersSent) res.writeHead(500);
      res.end(String(err));
    });
  });
  return { ...running, seen };
}

/**
 * A relay in front of a merchant at `origin`: each request is sent on with its end-to-end headers once `before`
 * resolved (a test holds paid requests there), and the merchant's answer is relayed back.
 */
export async function relayMerchant(
  origin: string,
  before: (req: IncomingMessage) => Promise<void> | void = () => {},
): Promise<ScriptedMerchant> {
  return scriptedMerchant(async (req, res) => {
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(req.headers))
      if (typeof v === 'string' && !['host', 'connection', 'content-length'].includes(k)) headers[k] = v;
    await before(req);
    const r = await fetch(origin + (req.url ?? '/'), { headers });
    const out: Record<string, string> = {};
    r.headers.forEach((v, k) => {
      if (!['content-length', 'transfer-encoding', 'connection', 'content-encoding'].includes(k)) out[k] = v;
    });
    res.writeHead(r.status, out);
    res.end(Buffer.from(await r.arrayBuffer()));
  });
}

/**
 * A merchant that answers EVERY call (paid or not) with the 402 the official v2 merchant gave: the paid hop is
 * refused with another 402.
 */
export async function fourOhTwoAgainMerchant(v2: X402V2Merchant): Promise<ScriptedMerchant> {
  const probe = await fetch(v2.url + v2.paidPath);
  const required = probe.headers.get('payment-required');
  if (probe.status !== 402 || required === null) throw new Error('the v2 merchant did not answer 402');
  return scriptedMerchant((_req, res) => {
    res.writeHead(402, { 'payment-required': required, 'content-type': 'application/json' });
    res.end('{}');
  });
}

/**
 * The mppx merchant with its x402 offer removed: a relay in front of it that drops PAYMENT-REQUIRED from the 402,
 * so only the MPP challenge is left (the router must then pay MPP: `Authorization: Payment ...`).
 */
export async function mppOnlyMerchant(mpp: MppxMerchant): Promise<ScriptedMerchant> {
  return scriptedMerchant(async (req, res) => {
    const headers: Record<string, string> = {};
    if (typeof req.headers.authorization === 'string') headers.authorization = req.headers.authorization;
    const r = await fetch(mpp.url + (req.url ?? '/'), { method: req.method ?? 'GET', headers });
    const out: Record<string, string> = {};
    r.headers.forEach((v, k) => {
      if (!['payment-required', 'content-length', 'transfer-encoding', 'connection', 'content-encoding'].includes(k))
        out[k] = v;
    });
    res.writeHead(r.status, out);
    res.end(Buffer.from(await r.arrayBuffer()));
  });
}
