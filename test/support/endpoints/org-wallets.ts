// Samples of the organization endpoints (wallets) for the route-level tests (see index.ts). Each sample makes
// its own organization with the seller as its Admin, so a sample's share or card never meets another's.
import { randomUUID } from 'node:crypto';
import { OrgPaymentMethod, User } from '../../../shared/db/entities/index.js';
import type { EndpointCase, EndpointFixtures } from './index.js';
import { makeGroup, makeOrg, makeWallet } from '../orgs.js';

const ORG = '/api/v1/organizations/:orgId';

/** A fresh organization of the seller's (found by the seller's wallet address: the fixtures carry no userId). */
async function sellerOrg(f: EndpointFixtures): Promise<string> {
  const seller = await f.stack.ctx.db.em().findOneOrFail(User, { walletAddress: f.seller.walletAddress });
  return (await makeOrg(f.stack, seller.id)).orgId;
}

async function card(f: EndpointFixtures, orgId: string): Promise<string> {
  const em = f.stack.ctx.db.em();
  const id = randomUUID();
  const expYear = new Date().getUTCFullYear() + 3;
  em.create(OrgPaymentMethod, {
    id,
    orgId,
    brand: 'visa',
    last4: '4242',
    expMonth: 12,
    expYear,
    createdAt: new Date(),
  });
  await em.flush();
  return id;
}

export const ORG_WALLETS_ENDPOINTS: Readonly<Record<string, EndpointCase>> = {
  [`POST ${ORG}/wallets`]: {
    sample: async (f) => ({ as: 'seller', params: { orgId: await sellerOrg(f) }, body: { label: 'Ops wallet' } }),
  },
  [`GET ${ORG}/wallets`]: {
    sample: async (f) => {
      const orgId = await sellerOrg(f);
      await makeWallet(f.stack, orgId);
      return { as: 'seller', params: { orgId } };
    },
  },
  [`GET ${ORG}/wallets/:walletId/balances`]: {
    sample: async (f) => {
      const orgId = await sellerOrg(f);
      const { walletId } = await makeWallet(f.stack, orgId);
      return { as: 'seller', params: { orgId, walletId } };
    },
  },
  [`GET ${ORG}/wallets/:walletId/groups`]: {
    sample: async (f) => {
      const orgId = await sellerOrg(f);
      const groupId = await makeGroup(f.stack, orgId);
      const { walletId } = await makeWallet(f.stack, orgId, 'Ops', [groupId]);
      return { as: 'seller', params: { orgId, walletId } };
    },
  },
  [`POST ${ORG}/wallets/:walletId/groups/:groupId`]: {
    sample: async (f) => {
      const orgId = await sellerOrg(f);
      const groupId = await makeGroup(f.stack, orgId);
      const { walletId } = await makeWallet(f.stack, orgId);
      return { as: 'seller', params: { orgId, walletId, groupId } };
    },
  },
  [`DELETE ${ORG}/wallets/:walletId/groups/:groupId`]: {
    sample: async (f) => {
      const orgId = await sellerOrg(f);
      const groupId = await makeGroup(f.stack, orgId);
      const { walletId } = await makeWallet(f.stack, orgId, 'Ops', [groupId]);
      return { as: 'seller', params: { orgId, walletId, groupId } };
    },
  },
  [`GET ${ORG}/groups/:groupId/wallets`]: {
    sample: async (f) => {
      const orgId = await sellerOrg(f);
      const groupId = await makeGroup(f.stack, orgId);
      await makeWallet(f.stack, orgId, 'Ops', [groupId]);
      return { as: 'seller', params: { orgId, groupId } };
    },
  },
  [`POST ${ORG}/payment-methods`]: {
    sample: async (f) => ({
      as: 'seller',
      params: { orgId: await sellerOrg(f) },
      body: { brand: 'visa', last4: '4242', expMonth: 12, expYear: new Date().getUTCFullYear() + 3 },
    }),
  },
  [`GET ${ORG}/payment-methods`]: {
    sample: async (f) => {
      const orgId = await sellerOrg(f);
      await card(f, orgId);
      return { as: 'seller', params: { orgId } };
    },
  },
  [`POST ${ORG}/groups/:groupId/payment-methods`]: {
    sample: async (f) => {
      const orgId = await sellerOrg(f);
      const groupId = await makeGroup(f.stack, orgId);
      return { as: 'seller', params: { orgId, groupId }, body: { paymentMethodId: await card(f, orgId) } };
    },
  },
};
