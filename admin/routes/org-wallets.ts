// Organization endpoints (wallets, their shares with groups, enrolled cards): parse -> call shared/organizations
// -> map. Who may do what (Admin, Member, anyone else) is decided by the services.
import { z } from 'zod';
import type { ApiKeyCaller } from '../../shared/auth/caller.js';
import { API_KEY } from '../../shared/auth/route-callers.js';
import { toWire } from '../../shared/money.js';
import {
  type PaymentMethodRecord,
  SharePaymentMethodBody,
  enrollPaymentMethod,
  enrollPaymentMethodBody,
  listPaymentMethods,
  sharePaymentMethod,
} from '../../shared/organizations/payment-methods.js';
import { groupWallets, shareWallet, unshareWallet, walletGroupIds } from '../../shared/organizations/wallet-shares.js';
import {
  CreateWalletBody,
  type WalletRecord,
  createWallet,
  listWallets,
  walletBalances,
} from '../../shared/organizations/wallets.js';
import type { AdminDeps } from '../deps.js';
import { type AdminRoute, type AdminRouterContext, del, get, post } from '../http/route.js';
import { parse } from '../http/validate.js';

type Ctx = AdminRouterContext;

// Path ids are checked by the services: one that is not a UUID names nothing there (404), like an unknown one.
const OrgPath = z.object({ orgId: z.string() });
const WalletPath = OrgPath.extend({ walletId: z.string() });
const GroupPath = OrgPath.extend({ groupId: z.string() });
const SharePath = WalletPath.extend({ groupId: z.string() });

const walletOut = (w: WalletRecord) => ({
  walletId: w.walletId,
  label: w.label,
  address: w.address,
  createdAt: w.createdAt.toISOString(),
});

const paymentMethodOut = (p: PaymentMethodRecord) => ({
  paymentMethodId: p.paymentMethodId,
  brand: p.brand,
  last4: p.last4,
  expMonth: p.expMonth,
  expYear: p.expYear,
  createdAt: p.createdAt.toISOString(),
});

export function orgWalletsRoutes({ ctx: svc }: AdminDeps): AdminRoute[] {
  const create = async (ctx: Ctx, caller: ApiKeyCaller) => {
    const { orgId } = parse(OrgPath, ctx.params, 'params');
    const body = parse(CreateWalletBody, ctx.request.body);
    const wallet = await createWallet(svc, caller.userId, orgId, body);
    ctx.status = 201;
    ctx.body = { success: true, wallet: walletOut(wallet) };
  };
  const list = async (ctx: Ctx, caller: ApiKeyCaller) => {
    const { orgId } = parse(OrgPath, ctx.params, 'params');
    const wallets = await listWallets(svc, caller.userId, orgId);
    ctx.body = { success: true, wallets: wallets.map(walletOut) };
  };
  const balances = async (ctx: Ctx, caller: ApiKeyCaller) => {
    const { orgId, walletId } = parse(WalletPath, ctx.params, 'params');
    const r = await walletBalances(svc, caller.userId, orgId, walletId);
    ctx.body = {
      success: true,
      walletId: r.wallet.walletId,
      address: r.wallet.address,
      balances: r.balances.map((b) => ({
        asset: b.asset,
        symbol: b.symbol,
        decimals: b.decimals,
        amount: toWire(b.amount),
      })),
    };
  };
  const share = async (ctx: Ctx, caller: ApiKeyCaller) => {
    const { orgId, walletId, groupId } = parse(SharePath, ctx.params, 'params');
    await shareWallet(svc, caller.userId, orgId, walletId, groupId);
    ctx.body = { success: true };
  };
  const unshare = async (ctx: Ctx, caller: ApiKeyCaller) => {
    const { orgId, walletId, groupId } = parse(SharePath, ctx.params, 'params');
    await unshareWallet(svc, caller.userId, orgId, walletId, groupId);
    ctx.body = { success: true };
  };
  const groupsOfWallet = async (ctx: Ctx, caller: ApiKeyCaller) => {
    const { orgId, walletId } = parse(WalletPath, ctx.params, 'params');
    ctx.body = { success: true, groupIds: await walletGroupIds(svc, caller.userId, orgId, walletId) };
  };
  const walletsOfGroup = async (ctx: Ctx, caller: ApiKeyCaller) => {
    const { orgId, groupId } = parse(GroupPath, ctx.params, 'params');
    const wallets = await groupWallets(svc, caller.userId, orgId, groupId);
    ctx.body = { success: true, wallets: wallets.map(walletOut) };
  };
  const enroll = async (ctx: Ctx, caller: ApiKeyCaller) => {
    const { orgId } = parse(OrgPath, ctx.params, 'params');
    // Expiry is judged by the service's clock at the time of the request.
    const body = parse(enrollPaymentMethodBody(svc.now()), ctx.request.body);
    const paymentMethod = await enrollPaymentMethod(svc, caller.userId, orgId, body);
    ctx.status = 201;
    ctx.body = { success: true, paymentMethod: paymentMethodOut(paymentMethod) };
  };
  const listCards = async (ctx: Ctx, caller: ApiKeyCaller) => {
    const { orgId } = parse(OrgPath, ctx.params, 'params');
    const paymentMethods = await listPaymentMethods(svc, caller.userId, orgId);
    ctx.body = { success: true, paymentMethods: paymentMethods.map(paymentMethodOut) };
  };
  const shareCard = async (ctx: Ctx, caller: ApiKeyCaller) => {
    const { orgId, groupId } = parse(GroupPath, ctx.params, 'params');
    const { paymentMethodId } = parse(SharePaymentMethodBody, ctx.request.body);
    await sharePaymentMethod(svc, caller.userId, orgId, groupId, paymentMethodId);
    ctx.body = { success: true };
  };

  const org = '/organizations/:orgId';
  return [
    post(`${org}/wallets`, API_KEY, create),
    get(`${org}/wallets`, API_KEY, list),
    get(`${org}/wallets/:walletId/balances`, API_KEY, balances),
    get(`${org}/wallets/:walletId/groups`, API_KEY, groupsOfWallet),
    post(`${org}/wallets/:walletId/groups/:groupId`, API_KEY, share),
    del(`${org}/wallets/:walletId/groups/:groupId`, API_KEY, unshare),
    get(`${org}/groups/:groupId/wallets`, API_KEY, walletsOfGroup),
    post(`${org}/payment-methods`, API_KEY, enroll),
    get(`${org}/payment-methods`, API_KEY, listCards),
    post(`${org}/groups/:groupId/payment-methods`, API_KEY, shareCard),
  ];
}
