// Organizations built straight in the database, for tests of one area that need the others' objects (a wallet test
// needs a group, a budget test a member) without depending on their endpoints.
import { randomUUID } from 'node:crypto';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import {
  OrgGroup,
  OrgGroupMember,
  OrgMembership,
  OrgWallet,
  OrgWalletShare,
  Organization,
  type OrgRole,
} from '../../shared/db/entities/index.js';
import type { Stack } from './stack.js';

export async function makeOrg(stack: Stack, adminUserId: string, name = 'Acme') {
  const em = stack.ctx.db.em();
  const now = new Date();
  const orgId = randomUUID();
  em.create(Organization, { id: orgId, name, createdByUserId: adminUserId, createdAt: now });
  const membershipId = randomUUID();
  em.create(OrgMembership, {
    id: membershipId,
    orgId,
    userId: adminUserId,
    role: 'Admin',
    active: true,
    createdAt: now,
    removedAt: null,
  });
  await em.flush();
  return { orgId, adminMembershipId: membershipId };
}

export async function makeMember(stack: Stack, orgId: string, userId: string, role: OrgRole = 'Member') {
  const em = stack.ctx.db.em();
  const id = randomUUID();
  em.create(OrgMembership, { id, orgId, userId, role, active: true, createdAt: new Date(), removedAt: null });
  await em.flush();
  return id;
}

export async function makeGroup(stack: Stack, orgId: string, memberIds: readonly string[] = [], name = 'Team') {
  const em = stack.ctx.db.em();
  const id = randomUUID();
  const now = new Date();
  em.create(OrgGroup, { id, orgId, name, active: true, createdAt: now });
  for (const membershipId of memberIds) em.create(OrgGroupMember, { groupId: id, membershipId, orgId, createdAt: now });
  await em.flush();
  return id;
}

export async function makeWallet(stack: Stack, orgId: string, label = 'Ops', sharedWith: readonly string[] = []) {
  const em = stack.ctx.db.em();
  const id = randomUUID();
  const key = generatePrivateKey();
  const address = privateKeyToAccount(key).address;
  const now = new Date();
  em.create(OrgWallet, { id, orgId, label, address, walletKeyEnc: stack.ctx.box.seal(key), createdAt: now });
  for (const groupId of sharedWith) em.create(OrgWalletShare, { walletId: id, groupId, orgId, createdAt: now });
  await em.flush();
  return { walletId: id, address };
}
