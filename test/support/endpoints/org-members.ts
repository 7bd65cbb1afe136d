// Samples of the organization endpoints (members, groups, activity) for the route-level tests (see index.ts).
// Each sample builds its own organization with the seller as its Admin, so samples never depend on each other.
import { User } from '../../../shared/db/entities/index.js';
import type { EndpointCase, EndpointFixtures } from './index.js';
import { makeGroup, makeMember, makeOrg } from '../orgs.js';

const ORG = '/api/v1/organizations/:orgId';
const GROUP = `${ORG}/groups/:groupId`;

async function userOf(f: EndpointFixtures, who: 'seller' | 'subscriber') {
  return f.stack.ctx.db.em().findOneOrFail(User, { walletAddress: f[who].walletAddress });
}

/** A fresh organization of the seller's, with the subscriber as a Member. */
async function orgWithMember(f: EndpointFixtures) {
  const { orgId } = await makeOrg(f.stack, (await userOf(f, 'seller')).id, 'Sample org');
  const memberId = await makeMember(f.stack, orgId, (await userOf(f, 'subscriber')).id);
  return { orgId, memberId };
}

async function orgWithGroup(f: EndpointFixtures) {
  const { orgId, memberId } = await orgWithMember(f);
  const groupId = await makeGroup(f.stack, orgId, [memberId], 'Sample group');
  return { orgId, memberId, groupId };
}

const page = { page: '1', limit: '10' };

export const ORG_MEMBERS_ENDPOINTS: Readonly<Record<string, EndpointCase>> = {
  'POST /api/v1/organizations': {
    sample: async () => ({ as: 'seller', body: { name: 'Acme' } }),
  },
  'GET /api/v1/organizations/my-memberships': {
    sample: async () => ({ as: 'seller' }),
  },
  [`POST ${ORG}/members`]: {
    sample: async (f) => {
      const { orgId } = await makeOrg(f.stack, (await userOf(f, 'seller')).id, 'Sample org');
      return {
        as: 'seller',
        params: { orgId },
        body: { email: (await userOf(f, 'subscriber')).email, role: 'Member' },
      };
    },
  },
  [`GET ${ORG}/members`]: {
    sample: async (f) => ({ as: 'seller', params: { orgId: (await orgWithMember(f)).orgId }, query: page }),
  },
  [`PATCH ${ORG}/members/:memberId`]: {
    sample: async (f) => ({ as: 'seller', params: await orgWithMember(f), body: { role: 'Admin' } }),
  },
  [`DELETE ${ORG}/members/:memberId`]: {
    sample: async (f) => ({ as: 'seller', params: await orgWithMember(f) }),
  },
  [`POST ${ORG}/groups`]: {
    sample: async (f) => ({ as: 'seller', params: { orgId: (await orgWithMember(f)).orgId }, body: { name: 'Ops' } }),
  },
  [`GET ${ORG}/groups`]: {
    sample: async (f) => ({
      as: 'seller',
      params: { orgId: (await orgWithGroup(f)).orgId },
      query: { ...page, includeInactive: 'true' },
    }),
  },
  [`GET ${GROUP}`]: {
    sample: async (f) => {
      const { orgId, groupId } = await orgWithGroup(f);
      return { as: 'seller', params: { orgId, groupId } };
    },
  },
  [`PATCH ${GROUP}`]: {
    sample: async (f) => {
      const { orgId, groupId } = await orgWithGroup(f);
      return { as: 'seller', params: { orgId, groupId }, body: { name: 'Renamed', active: true } };
    },
  },
  [`DELETE ${GROUP}`]: {
    sample: async (f) => {
      const { orgId, groupId } = await orgWithGroup(f);
      return { as: 'seller', params: { orgId, groupId } };
    },
  },
  [`POST ${GROUP}/members`]: {
    sample: async (f) => {
      const { orgId, memberId } = await orgWithMember(f);
      const groupId = await makeGroup(f.stack, orgId, [], 'Empty group');
      return { as: 'seller', params: { orgId, groupId }, body: { memberId } };
    },
  },
  [`GET ${GROUP}/members`]: {
    sample: async (f) => {
      const { orgId, groupId } = await orgWithGroup(f);
      return { as: 'seller', params: { orgId, groupId } };
    },
  },
  [`DELETE ${GROUP}/members/:memberId`]: {
    sample: async (f) => ({ as: 'seller', params: await orgWithGroup(f) }),
  },
  [`GET ${ORG}/activity`]: {
    sample: async (f) => {
      const seller = await userOf(f, 'seller');
      const { orgId } = await orgWithMember(f);
      return {
        as: 'seller',
        params: { orgId },
        query: {
          ...page,
          eventType: 'member.added',
          actorUserId: seller.id,
          from: '2020-01-01T00:00:00Z',
          to: '2100-01-01T00:00:00.000+00:00',
        },
      };
    },
  },
};
