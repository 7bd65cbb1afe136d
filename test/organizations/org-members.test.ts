// Organizations, members, groups and the activity log, through the real processes on both databases: every
// endpoint as an Admin, a Member, an outsider and an Admin of another organization; exact bodies, rows and activity
// entries; bad input; other organizations' ids; and the last Admin kept under concurrent demotions and removals.
import type { ExecutionContext } from 'ava';
import { randomUUID } from 'node:crypto';
import { OrgActivity, OrgGroup, OrgGroupMember, OrgMembership, Organization } from '../../shared/db/entities/index.js';
import type { ApiClient, ApiResponse } from '../support/http.js';
import { forEachDb } from '../support/matrix.js';
import { makeGroup, makeMember } from '../support/orgs.js';
import type { Stack } from '../support/stack.js';

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const BAD_UUID = '0194f3f6-2a5e-7c4e-9b1a-6f1d2c3b4a59';

const patch = (api: ApiClient, path: string, body: unknown) => api.call('PATCH', path, body);

function refused(t: ExecutionContext, r: ApiResponse, status: number, code: string, what = ''): void {
  t.is(r.status, status, `${what} ${r.text.slice(0, 300)}`);
  t.is((r.body as { code?: string }).code, code, what);
}

type User = Awaited<ReturnType<Stack['user']>>;

interface World {
  readonly admin: User;
  readonly member: User;
  readonly outsider: User;
  /** The Admin of another organization. */
  readonly other: User;
  readonly orgId: string;
  readonly adminMemberId: string;
  readonly memberId: string;
  readonly otherOrgId: string;
  readonly otherMemberId: string;
  readonly otherGroupId: string;
}

/** An organization made through the API (Admin + a Member), and another organization with a group. */
async function world(s: Stack): Promise<World> {
  const [admin, member, outsider, other] = await Promise.all([s.user(), s.user(), s.user(), s.user()]);
  const orgId = (await admin.api.post('/organizations', { name: 'Acme' })).body.organization.orgId as string;
  const added = await admin.api.post(`/organizations/${orgId}/members`, { userId: member.userId });
  const otherOrgId = (await other.api.post('/organizations', { name: 'Other' })).body.organization.orgId as string;
  const otherMemberId = await makeMember(s, otherOrgId, outsider.userId);
  const otherGroupId = await makeGroup(s, otherOrgId, [otherMemberId], 'Other team');
  const adminRow = await s.ctx.db.em().findOneOrFail(OrgMembership, { orgId, userId: admin.userId });
  return {
    admin,
    member,
    outsider,
    other,
    orgId,
    adminMemberId: adminRow.id,
    memberId: added.body.member.memberId as string,
    otherOrgId,
    otherMemberId,
    otherGroupId,
  };
}

const activityOf = (s: Stack, orgId: string) =>
  s.ctx.db.em().find(OrgActivity, { orgId }, { orderBy: { createdAt: 'asc', id: 'asc' } });

/** The org's activity rows as (eventType, actor, subject, details), oldest first. */
async function events(s: Stack, orgId: string) {
  return (await activityOf(s, orgId)).map((a) => [a.eventType, a.actorUserId, a.subjectId, a.details]);
}

forEachDb(({ stack, test }) => {
  test('POST /organizations: 201, the creator is its first Admin, organization.created recorded', async (t) => {
    const u = await stack().user();
    const r = await u.api.post('/organizations', { name: '  Acme Corp ' });
    t.is(r.status, 201, r.text);
    const { orgId, createdAt } = r.body.organization;
    t.deepEqual(r.body, { success: true, organization: { orgId, name: 'Acme Corp', createdAt } });
    t.regex(createdAt, ISO);
    const em = stack().ctx.db.em();
    const org = await em.findOneOrFail(Organization, { id: orgId });
    t.deepEqual([org.name, org.createdByUserId, org.createdAt.toISOString()], ['Acme Corp', u.userId, createdAt]);
    const ms = await em.find(OrgMembership, { orgId });
    t.deepEqual(
      ms.map((m) => [m.userId, m.role, m.active, m.removedAt ?? null]),
      [[u.userId, 'Admin', true, null]],
    );
    const acts = await activityOf(stack(), orgId);
    t.deepEqual(
      acts.map((a) => [a.eventType, a.actorUserId, a.subjectType, a.subjectId, a.details]),
      [['organization.created', u.userId, 'organization', orgId, { name: 'Acme Corp', adminMemberId: ms[0]?.id }]],
    );
  });

  test('POST /organizations: bad bodies are 400 and create nothing', async (t) => {
    const u = await stack().user();
    for (const body of [
      {},
      { name: '' },
      { name: '   ' },
      { name: 'a\u0000b' },
      { name: 'x'.repeat(201) },
      { name: 5 },
    ]) {
      refused(t, await u.api.post('/organizations', body), 400, 'BCK.HTTP.0400', JSON.stringify(body));
    }
    refused(t, await u.api.post('/organizations', { name: 'A', extra: 1 }), 400, 'BCK.HTTP.0400');
    refused(t, await u.api.raw('POST', '/organizations', '{"name":'), 400, 'BCK.HTTP.0400');
    t.is(await stack().ctx.db.em().count(Organization, { createdByUserId: u.userId }), 0);
  });

  test('GET /organizations/my-memberships: the caller active memberships only', async (t) => {
    const w = await world(stack());
    const loner = await stack().user();
    t.deepEqual((await loner.api.get('/organizations/my-memberships')).body, { success: true, memberships: [] });
    const second = (await w.admin.api.post('/organizations', { name: 'Second' })).body.organization.orgId;
    const mine = await w.admin.api.get('/organizations/my-memberships');
    t.is(mine.status, 200);
    t.deepEqual(mine.body, {
      success: true,
      memberships: [
        { orgId: w.orgId, orgName: 'Acme', role: 'Admin', isAdmin: true },
        { orgId: second, orgName: 'Second', role: 'Admin', isAdmin: true },
      ],
    });
    t.deepEqual((await w.member.api.get('/organizations/my-memberships')).body.memberships, [
      { orgId: w.orgId, orgName: 'Acme', role: 'Member', isAdmin: false },
    ]);
    t.is((await w.admin.api.del(`/organizations/${w.orgId}/members/${w.memberId}`)).status, 200);
    t.deepEqual((await w.member.api.get('/organizations/my-memberships')).body.memberships, []);
  });

  test('POST members: by userId or email (any case), 201 with the member; row and member.added', async (t) => {
    const w = await world(stack());
    const byEmail = await stack().user();
    const r = await w.admin.api.post(`/organizations/${w.orgId}/members`, {
      email: byEmail.email.toUpperCase(),
      role: 'Admin',
    });
    t.is(r.status, 201, r.text);
    const { memberId, createdAt } = r.body.member;
    t.deepEqual(r.body, {
      success: true,
      member: { memberId, userId: byEmail.userId, email: byEmail.email, role: 'Admin', createdAt },
    });
    t.regex(createdAt, ISO);
    const row = await stack().ctx.db.em().findOneOrFail(OrgMembership, { id: memberId });
    t.deepEqual(
      [row.orgId, row.userId, row.role, row.active, row.removedAt ?? null, row.createdAt.toISOString()],
      [w.orgId, byEmail.userId, 'Admin', true, null, createdAt],
    );
    const acts = await events(stack(), w.orgId);
    t.deepEqual(acts.slice(1), [
      ['member.added', w.admin.userId, w.memberId, { userId: w.member.userId, role: 'Member', reactivated: false }],
      ['member.added', w.admin.userId, memberId, { userId: byEmail.userId, role: 'Admin', reactivated: false }],
    ]);
    const [a] = await activityOf(stack(), w.orgId);
    t.is(a?.subjectType, 'organization');
  });

  test('POST members: 409 for an active member, 404 for an unknown user, 400 for bad bodies', async (t) => {
    const w = await world(stack());
    const path = `/organizations/${w.orgId}/members`;
    refused(t, await w.admin.api.post(path, { userId: w.member.userId }), 409, 'BCK.ORG.0008');
    refused(t, await w.admin.api.post(path, { email: w.admin.email }), 409, 'BCK.ORG.0008');
    refused(t, await w.admin.api.post(path, { userId: randomUUID() }), 404, 'BCK.ORG.0004');
    refused(t, await w.admin.api.post(path, { email: 'nobody@example.test' }), 404, 'BCK.ORG.0004');
    const u = await stack().user();
    for (const body of [
      {},
      { role: 'Member' },
      { userId: u.userId, email: u.email },
      { userId: 'not-a-uuid' },
      { email: 'not an email' },
      { email: `${u.email}\u0000` },
      { userId: u.userId, role: 'Owner' },
      { userId: u.userId, extra: true },
      [],
    ]) {
      refused(t, await w.admin.api.post(path, body), 400, 'BCK.HTTP.0400', JSON.stringify(body));
    }
    t.is(await stack().ctx.db.em().count(OrgMembership, { orgId: w.orgId }), 2);
  });

  test('POST members: a Member is 403, an outsider and another organization Admin 404', async (t) => {
    const w = await world(stack());
    const u = await stack().user();
    const path = `/organizations/${w.orgId}/members`;
    refused(t, await w.member.api.post(path, { userId: u.userId }), 403, 'BCK.ORG.0002');
    refused(t, await w.outsider.api.post(path, { userId: u.userId }), 404, 'BCK.ORG.0001');
    refused(t, await w.other.api.post(path, { userId: u.userId }), 404, 'BCK.ORG.0001');
    refused(t, await w.admin.api.post(`/organizations/${BAD_UUID}/members`, { userId: u.userId }), 404, 'BCK.ORG.0001');
    refused(t, await w.admin.api.post('/organizations/acme/members', { userId: u.userId }), 404, 'BCK.ORG.0001');
    t.is(await stack().ctx.db.em().count(OrgMembership, { userId: u.userId }), 0);
  });

  test('a removed member is added again on the same membership, with the role asked', async (t) => {
    const w = await world(stack());
    t.is((await w.admin.api.del(`/organizations/${w.orgId}/members/${w.memberId}`)).status, 200);
    const r = await w.admin.api.post(`/organizations/${w.orgId}/members`, { email: w.member.email, role: 'Admin' });
    t.is(r.status, 201, r.text);
    t.like(r.body.member, { memberId: w.memberId, userId: w.member.userId, role: 'Admin' });
    const row = await stack().ctx.db.em().findOneOrFail(OrgMembership, { id: w.memberId });
    t.deepEqual([row.active, row.removedAt ?? null, row.role], [true, null, 'Admin']);
    t.is(row.createdAt.toISOString(), r.body.member.createdAt);
    const last = (await events(stack(), w.orgId)).at(-1);
    t.deepEqual(last, [
      'member.added',
      w.admin.userId,
      w.memberId,
      { userId: w.member.userId, role: 'Admin', reactivated: true },
    ]);
    t.is((await w.member.api.get(`/organizations/${w.orgId}/members`)).status, 200);
  });

  test('GET members: Admins and Members read the active members, paged; others 404; bad query 400', async (t) => {
    const w = await world(stack());
    const extra = await stack().user();
    const extraId = (await w.admin.api.post(`/organizations/${w.orgId}/members`, { userId: extra.userId })).body.member
      .memberId;
    const path = `/organizations/${w.orgId}/members`;
    for (const who of [w.admin, w.member]) {
      const r = await who.api.get(path);
      t.is(r.status, 200, r.text);
      t.deepEqual(r.body.meta, { total: 3, page: 1, limit: 20 });
      t.deepEqual(
        r.body.members.map((m: Record<string, string>) => [m.memberId, m.userId, m.email, m.role]),
        [
          [w.adminMemberId, w.admin.userId, w.admin.email, 'Admin'],
          [w.memberId, w.member.userId, w.member.email, 'Member'],
          [extraId, extra.userId, extra.email, 'Member'],
        ],
      );
      t.deepEqual(Object.keys(r.body.members[0]).sort(), ['createdAt', 'email', 'memberId', 'role', 'userId']);
    }
    const p2 = await w.member.api.get(`${path}?page=2&limit=2`);
    t.deepEqual(p2.body.meta, { total: 3, page: 2, limit: 2 });
    t.deepEqual(
      p2.body.members.map((m: { memberId: string }) => m.memberId),
      [extraId],
    );
    await w.admin.api.del(`${path}/${extraId}`);
    t.deepEqual((await w.admin.api.get(path)).body.meta.total, 2);
    refused(t, await w.outsider.api.get(path), 404, 'BCK.ORG.0001');
    refused(t, await w.other.api.get(path), 404, 'BCK.ORG.0001');
    refused(t, await extra.api.get(path), 404, 'BCK.ORG.0001', 'a removed member');
    for (const q of ['limit=0', 'limit=101', 'page=0', 'page=abc', 'limit=1.5', 'page=%00']) {
      refused(t, await w.admin.api.get(`${path}?${q}`), 400, 'BCK.HTTP.0400', q);
    }
  });

  test('PATCH members/:memberId: an Admin changes a role (member.role_changed); same role records nothing', async (t) => {
    const w = await world(stack());
    const path = `/organizations/${w.orgId}/members/${w.memberId}`;
    const r = await patch(w.admin.api, path, { role: 'Admin' });
    t.is(r.status, 200, r.text);
    t.deepEqual(r.body, {
      success: true,
      member: {
        memberId: w.memberId,
        userId: w.member.userId,
        email: w.member.email,
        role: 'Admin',
        createdAt: r.body.member.createdAt,
      },
    });
    t.is((await stack().ctx.db.em().findOneOrFail(OrgMembership, { id: w.memberId })).role, 'Admin');
    const before = (await activityOf(stack(), w.orgId)).length;
    t.is((await patch(w.admin.api, path, { role: 'Admin' })).status, 200);
    t.is((await activityOf(stack(), w.orgId)).length, before);
    t.is((await patch(w.member.api, path, { role: 'Member' })).status, 200, 'the new Admin demotes itself');
    t.deepEqual((await events(stack(), w.orgId)).slice(-2), [
      ['member.role_changed', w.admin.userId, w.memberId, { userId: w.member.userId, from: 'Member', to: 'Admin' }],
      ['member.role_changed', w.member.userId, w.memberId, { userId: w.member.userId, from: 'Admin', to: 'Member' }],
    ]);
  });

  test('PATCH members/:memberId: 403 for a Member, 404 for others and for ids of other organizations, 400', async (t) => {
    const w = await world(stack());
    const base = `/organizations/${w.orgId}/members`;
    refused(t, await patch(w.member.api, `${base}/${w.adminMemberId}`, { role: 'Member' }), 403, 'BCK.ORG.0002');
    refused(t, await patch(w.member.api, `${base}/${w.memberId}`, { role: 'Admin' }), 403, 'BCK.ORG.0002');
    refused(t, await patch(w.outsider.api, `${base}/${w.memberId}`, { role: 'Admin' }), 404, 'BCK.ORG.0001');
    refused(t, await patch(w.other.api, `${base}/${w.memberId}`, { role: 'Admin' }), 404, 'BCK.ORG.0001');
    for (const id of [w.otherMemberId, BAD_UUID, 'nope']) {
      refused(t, await patch(w.admin.api, `${base}/${id}`, { role: 'Admin' }), 404, 'BCK.ORG.0004', id);
    }
    for (const body of [{}, { role: 'Owner' }, { role: 'admin' }, { role: 'Admin', x: 1 }, { role: null }]) {
      refused(t, await patch(w.admin.api, `${base}/${w.memberId}`, body), 400, 'BCK.HTTP.0400', JSON.stringify(body));
    }
    await w.admin.api.del(`${base}/${w.memberId}`);
    refused(t, await patch(w.admin.api, `${base}/${w.memberId}`, { role: 'Admin' }), 404, 'BCK.ORG.0004', 'removed');
    const rows = await stack()
      .ctx.db.em()
      .find(OrgMembership, { id: [w.memberId, w.otherMemberId] });
    t.true(rows.every((m) => m.role === 'Member'));
  });

  test('the last Admin can be neither demoted nor removed (409 BCK.ORG.0009); with two, either may go', async (t) => {
    const w = await world(stack());
    const base = `/organizations/${w.orgId}/members`;
    refused(t, await patch(w.admin.api, `${base}/${w.adminMemberId}`, { role: 'Member' }), 409, 'BCK.ORG.0009');
    refused(t, await w.admin.api.del(`${base}/${w.adminMemberId}`), 409, 'BCK.ORG.0009');
    t.is((await patch(w.admin.api, `${base}/${w.memberId}`, { role: 'Admin' })).status, 200);
    t.is((await w.admin.api.del(`${base}/${w.adminMemberId}`)).status, 200, 'an Admin leaves');
    refused(t, await w.admin.api.get(base), 404, 'BCK.ORG.0001', 'the Admin who left');
    refused(t, await patch(w.member.api, `${base}/${w.memberId}`, { role: 'Member' }), 409, 'BCK.ORG.0009');
    const admins = await stack().ctx.db.em().find(OrgMembership, { orgId: w.orgId, role: 'Admin', active: true });
    t.deepEqual(
      admins.map((m) => m.id),
      [w.memberId],
    );
  });

  test('DELETE members/:memberId: soft removal, out of every group, member.removed; 403/404 otherwise', async (t) => {
    const w = await world(stack());
    const g1 = await makeGroup(stack(), w.orgId, [w.memberId, w.adminMemberId], 'One');
    const g2 = await makeGroup(stack(), w.orgId, [w.memberId], 'Two');
    const base = `/organizations/${w.orgId}/members`;
    refused(t, await w.member.api.del(`${base}/${w.adminMemberId}`), 403, 'BCK.ORG.0002');
    refused(t, await w.outsider.api.del(`${base}/${w.memberId}`), 404, 'BCK.ORG.0001');
    refused(t, await w.other.api.del(`${base}/${w.memberId}`), 404, 'BCK.ORG.0001');
    refused(t, await w.admin.api.del(`${base}/${w.otherMemberId}`), 404, 'BCK.ORG.0004');
    refused(t, await w.admin.api.del(`${base}/${BAD_UUID}`), 404, 'BCK.ORG.0004');
    const r = await w.admin.api.del(`${base}/${w.memberId}`);
    t.is(r.status, 200, r.text);
    t.deepEqual(r.body, { success: true });
    const em = stack().ctx.db.em();
    const row = await em.findOneOrFail(OrgMembership, { id: w.memberId });
    t.false(row.active);
    t.true(row.removedAt instanceof Date);
    t.is(await em.count(OrgGroupMember, { membershipId: w.memberId }), 0);
    t.is(await em.count(OrgGroupMember, { groupId: g1 }), 1, 'the other members stay');
    t.is(await em.count(OrgGroup, { id: [g1, g2], active: true }), 2, 'the groups stay');
    t.deepEqual((await events(stack(), w.orgId)).at(-1), [
      'member.removed',
      w.admin.userId,
      w.memberId,
      { userId: w.member.userId, role: 'Member', groupsLeft: 2 },
    ]);
    refused(t, await w.admin.api.del(`${base}/${w.memberId}`), 404, 'BCK.ORG.0004', 'twice');
    refused(t, await w.member.api.get(`/organizations/${w.orgId}/groups`), 404, 'BCK.ORG.0001');
  });

  for (const round of [1, 2, 3]) {
    test(`race ${round}: two Admins demoting each other at once leave one Admin`, async (t) => {
      const w = await world(stack());
      const base = `/organizations/${w.orgId}/members`;
      t.is((await patch(w.admin.api, `${base}/${w.memberId}`, { role: 'Admin' })).status, 200);
      const rs = await Promise.all([
        patch(w.admin.api, `${base}/${w.memberId}`, { role: 'Member' }),
        patch(w.member.api, `${base}/${w.adminMemberId}`, { role: 'Member' }),
      ]);
      // The one that runs second finds its caller no longer an Admin.
      t.deepEqual(rs.map((r) => r.status).sort(), [200, 403], rs.map((r) => r.text).join(' | '));
      const admins = await stack().ctx.db.em().count(OrgMembership, { orgId: w.orgId, role: 'Admin', active: true });
      t.is(admins, 1);
    });

    test(`race ${round}: two Admins demoting or removing themselves at once leave one Admin`, async (t) => {
      const w = await world(stack());
      const base = `/organizations/${w.orgId}/members`;
      t.is((await patch(w.admin.api, `${base}/${w.memberId}`, { role: 'Admin' })).status, 200);
      const rs = await Promise.all([
        patch(w.admin.api, `${base}/${w.adminMemberId}`, { role: 'Member' }),
        w.member.api.del(`${base}/${w.memberId}`),
      ]);
      t.deepEqual(rs.map((r) => r.status).sort(), [200, 409], rs.map((r) => r.text).join(' | '));
      t.is(rs.find((r) => r.status === 409)?.body.code, 'BCK.ORG.0009');
      const admins = await stack().ctx.db.em().count(OrgMembership, { orgId: w.orgId, role: 'Admin', active: true });
      t.is(admins, 1);
    });
  }

  test('POST groups: 201 with the group, group.created; 403 for a Member, 404 for others, 400 for bad bodies', async (t) => {
    const w = await world(stack());
    const path = `/organizations/${w.orgId}/groups`;
    const r = await w.admin.api.post(path, { name: ' Ops ' });
    t.is(r.status, 201, r.text);
    const { groupId, createdAt } = r.body.group;
    t.deepEqual(r.body, { success: true, group: { groupId, name: 'Ops', active: true, memberCount: 0, createdAt } });
    const row = await stack().ctx.db.em().findOneOrFail(OrgGroup, { id: groupId });
    t.deepEqual([row.orgId, row.name, row.active, row.createdAt.toISOString()], [w.orgId, 'Ops', true, createdAt]);
    t.deepEqual((await events(stack(), w.orgId)).at(-1), ['group.created', w.admin.userId, groupId, { name: 'Ops' }]);
    refused(t, await w.member.api.post(path, { name: 'X' }), 403, 'BCK.ORG.0002');
    refused(t, await w.outsider.api.post(path, { name: 'X' }), 404, 'BCK.ORG.0001');
    refused(t, await w.other.api.post(path, { name: 'X' }), 404, 'BCK.ORG.0001');
    for (const body of [{}, { name: '' }, { name: 'a\nb' }, { name: 'x'.repeat(201) }, { name: 'A', active: true }]) {
      refused(t, await w.admin.api.post(path, body), 400, 'BCK.HTTP.0400', JSON.stringify(body));
    }
    t.is(await stack().ctx.db.em().count(OrgGroup, { orgId: w.orgId }), 1);
  });

  test('GET groups: an Admin lists every group, a Member only its own; inactive ones on request', async (t) => {
    const w = await world(stack());
    const mine = await makeGroup(stack(), w.orgId, [w.memberId, w.adminMemberId], 'Mine');
    const notMine = await makeGroup(stack(), w.orgId, [], 'Not mine');
    // Made in the same millisecond, their order would be the ids': make `mine` the older one.
    await stack()
      .ctx.db.em()
      .nativeUpdate(OrgGroup, { id: mine }, { createdAt: new Date(Date.now() - 60_000) });
    const path = `/organizations/${w.orgId}/groups`;
    const all = await w.admin.api.get(path);
    t.is(all.status, 200, all.text);
    t.deepEqual(
      all.body.groups.map((g: Record<string, unknown>) => [g.groupId, g.name, g.active, g.memberCount]),
      [
        [mine, 'Mine', true, 2],
        [notMine, 'Not mine', true, 0],
      ],
    );
    t.deepEqual(all.body.meta, { total: 2, page: 1, limit: 20 });
    const own = await w.member.api.get(path);
    t.deepEqual(
      own.body.groups.map((g: { groupId: string }) => g.groupId),
      [mine],
    );
    t.deepEqual(own.body.meta, { total: 1, page: 1, limit: 20 });
    t.is((await w.admin.api.del(`${path}/${mine}`)).status, 200);
    t.deepEqual(
      (await w.admin.api.get(path)).body.groups.map((g: { groupId: string }) => g.groupId),
      [notMine],
    );
    t.deepEqual((await w.member.api.get(path)).body, {
      success: true,
      groups: [],
      meta: { total: 0, page: 1, limit: 20 },
    });
    const inactive = await w.member.api.get(`${path}?includeInactive=true`);
    t.deepEqual(
      inactive.body.groups.map((g: Record<string, unknown>) => [g.groupId, g.active]),
      [[mine, false]],
    );
    const paged = await w.admin.api.get(`${path}?includeInactive=true&page=2&limit=1`);
    t.deepEqual(
      [paged.body.groups.map((g: { groupId: string }) => g.groupId), paged.body.meta],
      [[notMine], { total: 2, page: 2, limit: 1 }],
    );
    refused(t, await w.outsider.api.get(path), 404, 'BCK.ORG.0001');
    refused(t, await w.other.api.get(path), 404, 'BCK.ORG.0001');
    for (const q of ['includeInactive=yes', 'includeInactive=1', 'limit=500', 'page=-1']) {
      refused(t, await w.admin.api.get(`${path}?${q}`), 400, 'BCK.HTTP.0400', q);
    }
  });

  test('GET groups/:groupId: an Admin any group, a Member its own; other ids 404', async (t) => {
    const w = await world(stack());
    const base = `/organizations/${w.orgId}/groups`;
    t.deepEqual((await w.member.api.get(base)).body, {
      success: true,
      groups: [],
      meta: { total: 0, page: 1, limit: 20 },
    });
    const mine = await makeGroup(stack(), w.orgId, [w.memberId], 'Mine');
    const notMine = await makeGroup(stack(), w.orgId, [], 'Not mine');
    const r = await w.member.api.get(`${base}/${mine}`);
    t.is(r.status, 200, r.text);
    const row = await stack().ctx.db.em().findOneOrFail(OrgGroup, { id: mine });
    t.deepEqual(r.body, {
      success: true,
      group: { groupId: mine, name: 'Mine', active: true, memberCount: 1, createdAt: row.createdAt.toISOString() },
    });
    t.is((await w.admin.api.get(`${base}/${notMine}`)).status, 200);
    refused(t, await w.member.api.get(`${base}/${notMine}`), 404, 'BCK.ORG.0003');
    for (const id of [w.otherGroupId, BAD_UUID, 'nope']) {
      refused(t, await w.admin.api.get(`${base}/${id}`), 404, 'BCK.ORG.0003', id);
    }
    refused(t, await w.outsider.api.get(`${base}/${mine}`), 404, 'BCK.ORG.0001');
    refused(t, await w.other.api.get(`${base}/${mine}`), 404, 'BCK.ORG.0001');
    refused(t, await w.other.api.get(`/organizations/${w.orgId}/groups/${w.otherGroupId}`), 404, 'BCK.ORG.0001');
  });

  test('PATCH groups/:groupId: rename, deactivate, reactivate, each recorded once; 403/404/400', async (t) => {
    const w = await world(stack());
    const g = await makeGroup(stack(), w.orgId, [w.memberId], 'Ops');
    const path = `/organizations/${w.orgId}/groups/${g}`;
    const r = await patch(w.admin.api, path, { name: 'Platform', active: false });
    t.is(r.status, 200, r.text);
    t.deepEqual(r.body, {
      success: true,
      group: { groupId: g, name: 'Platform', active: false, memberCount: 1, createdAt: r.body.group.createdAt },
    });
    t.like((await patch(w.admin.api, path, { active: true })).body.group, { active: true, name: 'Platform' });
    const before = (await activityOf(stack(), w.orgId)).length;
    t.is((await patch(w.admin.api, path, { name: 'Platform', active: true })).status, 200);
    t.is((await activityOf(stack(), w.orgId)).length, before, 'no change, no entry');
    const last = (await events(stack(), w.orgId)).slice(-3);
    // The first PATCH's two entries share its transaction's time: their order between them is not defined.
    t.deepEqual(
      [...last.slice(0, 2)].sort((a, b) => String(a[0]).localeCompare(String(b[0]))),
      [
        ['group.deactivated', w.admin.userId, g, { name: 'Platform' }],
        ['group.renamed', w.admin.userId, g, { from: 'Ops', to: 'Platform' }],
      ],
    );
    t.deepEqual(last[2], ['group.reactivated', w.admin.userId, g, { name: 'Platform' }]);
    const row = await stack().ctx.db.em().findOneOrFail(OrgGroup, { id: g });
    t.deepEqual([row.name, row.active], ['Platform', true]);
    refused(t, await patch(w.member.api, path, { name: 'X' }), 403, 'BCK.ORG.0002');
    refused(t, await patch(w.outsider.api, path, { name: 'X' }), 404, 'BCK.ORG.0001');
    refused(t, await patch(w.other.api, path, { name: 'X' }), 404, 'BCK.ORG.0001');
    const cross = `/organizations/${w.orgId}/groups/${w.otherGroupId}`;
    refused(t, await patch(w.admin.api, cross, { name: 'X' }), 404, 'BCK.ORG.0003');
    for (const body of [{}, { name: '' }, { active: 'false' }, { name: 'X', memberCount: 3 }, { name: 'a\u001bb' }]) {
      refused(t, await patch(w.admin.api, path, body), 400, 'BCK.HTTP.0400', JSON.stringify(body));
    }
    t.is((await stack().ctx.db.em().findOneOrFail(OrgGroup, { id: w.otherGroupId })).name, 'Other team');
  });

  test('DELETE groups/:groupId: deactivates it (members kept), group.deactivated; 403/404', async (t) => {
    const w = await world(stack());
    const g = await makeGroup(stack(), w.orgId, [w.memberId], 'Ops');
    const path = `/organizations/${w.orgId}/groups/${g}`;
    refused(t, await w.member.api.del(path), 403, 'BCK.ORG.0002');
    refused(t, await w.outsider.api.del(path), 404, 'BCK.ORG.0001');
    refused(t, await w.other.api.del(path), 404, 'BCK.ORG.0001');
    refused(t, await w.admin.api.del(`/organizations/${w.orgId}/groups/${w.otherGroupId}`), 404, 'BCK.ORG.0003');
    const r = await w.admin.api.del(path);
    t.is(r.status, 200, r.text);
    t.like(r.body, { success: true, group: { groupId: g, name: 'Ops', active: false, memberCount: 1 } });
    const em = stack().ctx.db.em();
    t.false((await em.findOneOrFail(OrgGroup, { id: g })).active);
    t.true((await em.findOneOrFail(OrgGroup, { id: w.otherGroupId })).active);
    t.is(await em.count(OrgGroupMember, { groupId: g }), 1);
    t.deepEqual((await events(stack(), w.orgId)).at(-1), ['group.deactivated', w.admin.userId, g, { name: 'Ops' }]);
    t.is((await w.admin.api.del(path)).status, 200, 'again: nothing to do');
    t.is((await activityOf(stack(), w.orgId)).filter((a) => a.eventType === 'group.deactivated').length, 1);
    t.is((await w.member.api.get(path)).status, 200, 'its Member still reads it');
  });

  test('group members: add (201), list, remove; group.member_added / _removed; memberCount', async (t) => {
    const w = await world(stack());
    const g = await makeGroup(stack(), w.orgId, [], 'Ops');
    const base = `/organizations/${w.orgId}/groups/${g}/members`;
    const add = await w.admin.api.post(base, { memberId: w.memberId });
    t.is(add.status, 201, add.text);
    t.deepEqual(add.body, { success: true });
    t.is((await w.admin.api.post(base, { memberId: w.adminMemberId })).status, 201);
    const row = await stack().ctx.db.em().findOneOrFail(OrgGroupMember, { groupId: g, membershipId: w.memberId });
    t.is(row.orgId, w.orgId);
    const list = await w.member.api.get(base);
    t.is(list.status, 200, list.text);
    t.deepEqual(list.body, {
      success: true,
      members: [
        {
          memberId: w.memberId,
          userId: w.member.userId,
          email: w.member.email,
          role: 'Member',
          addedAt: row.createdAt.toISOString(),
        },
        {
          memberId: w.adminMemberId,
          userId: w.admin.userId,
          email: w.admin.email,
          role: 'Admin',
          addedAt: list.body.members[1].addedAt,
        },
      ],
    });
    t.is((await w.admin.api.get(`/organizations/${w.orgId}/groups/${g}`)).body.group.memberCount, 2);
    const del = await w.admin.api.del(`${base}/${w.adminMemberId}`);
    t.is(del.status, 200, del.text);
    t.deepEqual(del.body, { success: true });
    t.is(await stack().ctx.db.em().count(OrgGroupMember, { groupId: g }), 1);
    t.deepEqual((await events(stack(), w.orgId)).slice(-3), [
      ['group.member_added', w.admin.userId, g, { memberId: w.memberId, userId: w.member.userId }],
      ['group.member_added', w.admin.userId, g, { memberId: w.adminMemberId, userId: w.admin.userId }],
      ['group.member_removed', w.admin.userId, g, { memberId: w.adminMemberId, userId: w.admin.userId }],
    ]);
    refused(t, await w.admin.api.del(`${base}/${w.adminMemberId}`), 404, 'BCK.ORG.0004', 'not in the group');
    refused(t, await w.admin.api.del(`${base}/nope`), 404, 'BCK.ORG.0004');
  });

  test('group members: 409 twice, 404 for non-members and other organizations ids, 409 inactive group, 400', async (t) => {
    const w = await world(stack());
    const g = await makeGroup(stack(), w.orgId, [w.memberId], 'Ops');
    const base = `/organizations/${w.orgId}/groups/${g}/members`;
    refused(t, await w.admin.api.post(base, { memberId: w.memberId }), 409, 'BCK.ORG.0008');
    refused(t, await w.admin.api.post(base, { memberId: w.otherMemberId }), 404, 'BCK.ORG.0004');
    refused(t, await w.admin.api.post(base, { memberId: BAD_UUID }), 404, 'BCK.ORG.0004');
    const crossGroup = `/organizations/${w.orgId}/groups/${w.otherGroupId}/members`;
    refused(t, await w.admin.api.post(crossGroup, { memberId: w.memberId }), 404, 'BCK.ORG.0003');
    refused(t, await w.admin.api.get(crossGroup), 404, 'BCK.ORG.0003');
    refused(t, await w.admin.api.del(`${crossGroup}/${w.otherMemberId}`), 404, 'BCK.ORG.0003');
    for (const body of [{}, { memberId: 'x' }, { memberId: w.memberId, role: 'Admin' }, { memberId: 5 }]) {
      refused(t, await w.admin.api.post(base, body), 400, 'BCK.HTTP.0400', JSON.stringify(body));
    }
    const removed = await stack().user();
    const removedId = (await w.admin.api.post(`/organizations/${w.orgId}/members`, { userId: removed.userId })).body
      .member.memberId;
    await w.admin.api.del(`/organizations/${w.orgId}/members/${removedId}`);
    refused(t, await w.admin.api.post(base, { memberId: removedId }), 404, 'BCK.ORG.0004', 'a removed member');
    await w.admin.api.del(`/organizations/${w.orgId}/groups/${g}`);
    refused(t, await w.admin.api.post(base, { memberId: w.adminMemberId }), 409, 'BCK.ORG.0010');
    t.is(await stack().ctx.db.em().count(OrgGroupMember, { groupId: g }), 1);
  });

  test('group members: a Member is 403 to manage and 404 on groups it is not in; others 404', async (t) => {
    const w = await world(stack());
    const mine = await makeGroup(stack(), w.orgId, [w.memberId], 'Mine');
    const notMine = await makeGroup(stack(), w.orgId, [w.adminMemberId], 'Not mine');
    const base = `/organizations/${w.orgId}/groups`;
    refused(t, await w.member.api.post(`${base}/${mine}/members`, { memberId: w.adminMemberId }), 403, 'BCK.ORG.0002');
    refused(t, await w.member.api.del(`${base}/${mine}/members/${w.memberId}`), 403, 'BCK.ORG.0002');
    refused(t, await w.member.api.get(`${base}/${notMine}/members`), 404, 'BCK.ORG.0003');
    for (const who of [w.outsider, w.other]) {
      refused(t, await who.api.get(`${base}/${mine}/members`), 404, 'BCK.ORG.0001');
      refused(t, await who.api.post(`${base}/${mine}/members`, { memberId: w.memberId }), 404, 'BCK.ORG.0001');
      refused(t, await who.api.del(`${base}/${mine}/members/${w.memberId}`), 404, 'BCK.ORG.0001');
    }
    t.is(await stack().ctx.db.em().count(OrgGroupMember, { groupId: mine }), 1);
  });

  test('GET activity: Admins only, newest first, filtered by event, actor and time, paged', async (t) => {
    const w = await world(stack());
    await patch(w.admin.api, `/organizations/${w.orgId}/members/${w.memberId}`, { role: 'Admin' });
    const g = (await w.member.api.post(`/organizations/${w.orgId}/groups`, { name: 'Ops' })).body.group.groupId;
    const path = `/organizations/${w.orgId}/activity`;
    const r = await w.admin.api.get(path);
    t.is(r.status, 200, r.text);
    t.deepEqual(r.body.meta, { total: 4, page: 1, limit: 20 });
    t.deepEqual(
      r.body.activity.map((a: { eventType: string }) => a.eventType),
      ['group.created', 'member.role_changed', 'member.added', 'organization.created'],
    );
    const newest = r.body.activity[0];
    t.deepEqual(newest, {
      id: newest.id,
      eventType: 'group.created',
      actorUserId: w.member.userId,
      subjectType: 'group',
      subjectId: g,
      details: { name: 'Ops' },
      createdAt: newest.createdAt,
    });
    t.regex(newest.createdAt, ISO);
    const byActor = await w.admin.api.get(`${path}?actorUserId=${w.member.userId}`);
    t.deepEqual(
      byActor.body.activity.map((a: { subjectId: string }) => a.subjectId),
      [g],
    );
    const byType = await w.admin.api.get(`${path}?eventType=member.added`);
    t.deepEqual(
      byType.body.activity.map((a: { subjectId: string }) => a.subjectId),
      [w.memberId],
    );
    const at = (await stack().ctx.db.em().findOneOrFail(OrgActivity, { id: newest.id })).createdAt;
    const from = encodeURIComponent(at.toISOString());
    const since = await w.admin.api.get(`${path}?from=${from}`);
    t.true(since.body.activity.some((a: { id: string }) => a.id === newest.id));
    const until = await w.admin.api.get(`${path}?to=${from}`);
    t.false(
      until.body.activity.some((a: { id: string }) => a.id === newest.id),
      'to is exclusive',
    );
    const future = await w.admin.api.get(`${path}?from=2999-01-01T00:00:00Z`);
    t.deepEqual(future.body, { success: true, activity: [], meta: { total: 0, page: 1, limit: 20 } });
    const p2 = await w.admin.api.get(`${path}?page=2&limit=3`);
    t.deepEqual(
      [p2.body.activity.map((a: { eventType: string }) => a.eventType), p2.body.meta],
      [['organization.created'], { total: 4, page: 2, limit: 3 }],
    );
    await patch(w.admin.api, `/organizations/${w.orgId}/members/${w.memberId}`, { role: 'Member' });
    refused(t, await w.member.api.get(path), 403, 'BCK.ORG.0002');
    refused(t, await w.outsider.api.get(path), 404, 'BCK.ORG.0001');
    refused(t, await w.other.api.get(path), 404, 'BCK.ORG.0001');
    const foreign = await w.other.api.get(`/organizations/${w.otherOrgId}/activity?actorUserId=${w.admin.userId}`);
    t.deepEqual(foreign.body.activity, [], 'an actor of another organization filters to nothing');
    for (const q of [
      'eventType=member.promoted',
      'actorUserId=someone',
      'from=yesterday',
      'from=2026-01-01',
      'from=2026-01-02T00:00:00Z&to=2026-01-01T00:00:00Z',
      'limit=0',
    ]) {
      refused(t, await w.admin.api.get(`${path}?${q}`), 400, 'BCK.HTTP.0400', q);
    }
  });

  test('another organization Admin sees nothing of this one; its own listing holds none of these rows', async (t) => {
    const w = await world(stack());
    const own = await w.other.api.get(`/organizations/${w.otherOrgId}/activity`);
    t.is(own.status, 200);
    t.true(own.body.activity.every((a: { subjectId: string }) => a.subjectId !== w.orgId));
    const members = await w.other.api.get(`/organizations/${w.otherOrgId}/members`);
    t.deepEqual(
      members.body.members.map((m: { memberId: string }) => m.memberId).sort(),
      [
        w.otherMemberId,
        (await stack().ctx.db.em().findOneOrFail(OrgMembership, { orgId: w.otherOrgId, userId: w.other.userId })).id,
      ].sort(),
    );
    const groups = await w.other.api.get(`/organizations/${w.otherOrgId}/groups`);
    t.deepEqual(
      groups.body.groups.map((g: { groupId: string }) => g.groupId),
      [w.otherGroupId],
    );
    // The outsider is a Member of the other organization: it reads that one, and its own group there.
    t.is((await w.outsider.api.get(`/organizations/${w.otherOrgId}/groups/${w.otherGroupId}`)).status, 200);
    refused(t, await w.outsider.api.get(`/organizations/${w.orgId}/groups/${w.otherGroupId}`), 404, 'BCK.ORG.0001');
  });
});
