// Samples of the organization endpoints (budgets) for the route-level tests (see index.ts). Each sample builds
// its own organization and group straight in the database (orgs.ts), the seller its Admin, so a create never meets
// the budget of an earlier sample (409).
import { randomUUID } from 'node:crypto';
import { GroupBudget, User } from '../../../shared/db/entities/index.js';
import type { EndpointCase, EndpointFixtures } from './index.js';
import { makeGroup, makeOrg } from '../orgs.js';

const BUDGETS = '/api/v1/organizations/:orgId/groups/:groupId/budgets';

/** A fresh organization of the seller's, with one group. */
async function sellersGroup(f: EndpointFixtures) {
  const seller = await f.stack.ctx.db.em().findOneOrFail(User, { walletAddress: f.seller.walletAddress });
  const { orgId } = await makeOrg(f.stack, seller.id, 'Budget sample');
  const groupId = await makeGroup(f.stack, orgId);
  return { orgId, groupId };
}

/** The same, with a usd budget of 500.00 a month. */
async function sellersBudget(f: EndpointFixtures) {
  const { orgId, groupId } = await sellersGroup(f);
  const em = f.stack.ctx.db.em();
  const now = new Date();
  const budgetId = randomUUID();
  em.create(GroupBudget, {
    id: budgetId,
    orgId,
    groupId,
    currency: 'usd',
    interval: 'month',
    spendingLimitCents: 50_000n,
    amountSpentCents: 0n,
    periodStart: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)),
    periodEnd: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)),
    alertThresholdPct: 80,
    alertedPeriodStart: null,
    createdAt: now,
    updatedAt: now,
  });
  await em.flush();
  return { orgId, groupId, budgetId };
}

export const ORG_BUDGETS_ENDPOINTS: Readonly<Record<string, EndpointCase>> = {
  [`POST ${BUDGETS}`]: {
    sample: async (f) => ({
      as: 'seller',
      params: await sellersGroup(f),
      body: { spendingLimitCents: '50000', currency: 'usd', interval: 'month', alertThresholdPct: 80 },
    }),
  },
  [`GET ${BUDGETS}`]: { sample: async (f) => ({ as: 'seller', params: await sellersGroup(f) }) },
  [`GET ${BUDGETS}/:budgetId`]: { sample: async (f) => ({ as: 'seller', params: await sellersBudget(f) }) },
  [`PATCH ${BUDGETS}/:budgetId`]: {
    sample: async (f) => ({
      as: 'seller',
      params: await sellersBudget(f),
      body: { spendingLimitCents: '60000', alertThresholdPct: 90, interval: 'year' },
    }),
  },
};
