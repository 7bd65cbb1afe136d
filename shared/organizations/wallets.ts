// Custodial wallets of an organization. An Admin creates one with a fresh key, sealed like users' wallet keys
// (the plain key never reaches a row, a log line or an answer); Admins see every wallet, a Member those shared
// with their active groups. A wallet a caller may not see is not found (404), like another organization's.
import { randomUUID } from 'node:crypto';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { z } from 'zod';
import { NETWORKS } from '../assets.js';
import type { ServiceContext } from '../context.js';
import { balanceOf } from '../settlement/token-ledger.js';
import type { Em } from '../db/orm.js';
import { AppError } from '../errors/app-error.js';
import { line } from '../text.js';
import { type OrgCaller, adminOf, isUuid, memberOf } from './org-caller.js';
import { emSql } from '../db/sql.js';
import { recordActivity } from '../org-activity/store.js';
import { memberGroupIds } from './member-groups.js';
import { InvariantError } from '../errors/invariant.js';
import {
  type WalletRow,
  addWallet,
  anyOrgWallet,
  isWalletSharedWith,
  walletById,
  walletIdsSharedWith,
  walletsOf,
} from './store/wallets.js';

export const CreateWalletBody = z.strictObject({ label: line(100, { trim: true }).min(1) });
export type CreateWalletInput = z.output<typeof CreateWalletBody>;

export interface WalletRecord {
  readonly walletId: string;
  readonly label: string;
  readonly address: string;
  readonly createdAt: Date;
}

export interface WalletBalance {
  readonly asset: string;
  readonly symbol: string;
  readonly decimals: number;
  readonly amount: bigint;
}

export const walletRecord = (w: Pick<WalletRow, 'id' | 'label' | 'address' | 'createdAt'>): WalletRecord => ({
  walletId: w.id,
  label: w.label,
  address: w.address,
  createdAt: w.createdAt,
});

const walletNotFound = (walletId: string) => new AppError('BCK.ORG.0005', { details: `wallet ${walletId} not found` });

/**
 * A wallet of the caller's organization that the caller may see: any for an Admin, for a Member one shared with
 * one of their active groups. 404 BCK.ORG.0005 otherwise, whichever organization it belongs to.
 */
export async function walletIn(em: Em, org: OrgCaller, walletId: string): Promise<WalletRow> {
  const w = isUuid(walletId) ? await walletById(em, org.orgId, walletId) : null;
  if (w === null) throw walletNotFound(walletId);
  if (org.role === 'Admin') return w;
  const groups = await memberGroupIds(em, org);
  const shared = groups.length > 0 && (await isWalletSharedWith(em, org.orgId, walletId, groups));
  if (!shared) throw walletNotFound(walletId);
  return w;
}

/** Creates a custodial wallet (Admin only) and records `wallet.created` in the same transaction. */
export async function createWallet(
  ctx: ServiceContext,
  userId: string,
  orgId: string,
  input: CreateWalletInput,
): Promise<WalletRecord> {
  const org = await adminOf(ctx, userId, orgId);
  const key = generatePrivateKey();
  const row = {
    id: randomUUID(),
    orgId: org.orgId,
    label: input.label,
    address: privateKeyToAccount(key).address,
    walletKeyEnc: ctx.box.seal(key),
    createdAt: ctx.now(),
  };
  // Only inserts in the transaction (no read first): on SQLite the first statement takes the write lock.
  await ctx.db.em().transactional(async (tx) => {
    addWallet(tx, row);
    await recordActivity(
      emSql(tx),
      {
        orgId: org.orgId,
        eventType: 'wallet.created',
        actorUserId: userId,
        subjectType: 'wallet',
        subjectId: row.id,
        details: { label: row.label, address: row.address },
      },
      row.createdAt,
    );
  });
  return walletRecord(row);
}

/** Every wallet for an Admin; for a Member the wallets shared with their active groups. Oldest first. */
export async function listWallets(ctx: ServiceContext, userId: string, orgId: string): Promise<WalletRecord[]> {
  const org = await memberOf(ctx, userId, orgId);
  const em = ctx.db.em();
  if (org.role === 'Admin') return (await walletsOf(em, org.orgId)).map(walletRecord);
  const groups = await memberGroupIds(em, org);
  if (groups.length === 0) return [];
  const ids = await walletIdsSharedWith(em, org.orgId, groups);
  if (ids.length === 0) return [];
  return (await walletsOf(em, org.orgId, ids)).map(walletRecord);
}

/** The wallet's balance of each asset the environment knows (0 for one it never held), read off the ledger. */
export async function walletBalances(
  ctx: ServiceContext,
  userId: string,
  orgId: string,
  walletId: string,
): Promise<{ wallet: WalletRecord; balances: WalletBalance[] }> {
  const org = await memberOf(ctx, userId, orgId);
  const em = ctx.db.em();
  const w = await walletIn(em, org, walletId);
  const assets = NETWORKS[ctx.config.ENVIRONMENT].assets;
  const balances = await Promise.all(
    assets.map(async (a) => ({
      asset: a.address,
      symbol: a.symbol,
      decimals: a.decimals,
      amount: await balanceOf(ctx, w.address, a.address),
    })),
  );
  return { wallet: walletRecord(w), balances };
}

const PRIVATE_KEY = /^0x[0-9a-f]{64}$/;
const isPrivateKey = (s: string): s is `0x${string}` => PRIVATE_KEY.test(s);

/**
 * Opens the sealed key of an organization wallet, for signing (the router). Callers authorize first; the key is
 * never logged nor returned to a client. 404 BCK.ORG.0005 for an unknown wallet.
 */
export async function orgWalletKeyOf(ctx: ServiceContext, walletId: string): Promise<`0x${string}`> {
  const w = isUuid(walletId) ? await anyOrgWallet(ctx.db.em(), walletId) : null;
  if (w === null) throw walletNotFound(walletId);
  const key = ctx.box.open(w.walletKeyEnc);
  // A key that does not open to a private key is a corrupt row or a wrong SECRETS_KEY: an internal error, and
  // its text stays out of the message.
  if (!isPrivateKey(key)) throw new InvariantError(`the key of wallet ${walletId} is not a private key`);
  return key;
}
