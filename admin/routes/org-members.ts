// Organization endpoints (the organization, its members, its groups and their members, the activity log): parse ->
// call shared/organizations -> map. Path ids are checked by the services: an id that is not a UUID names nothing
// there, so it is the 404 of an unknown id, never a 400 that would tell an outsider more.
import type { ApiKeyCaller } from '../../shared/auth/caller.js';
import { API_KEY } from '../../shared/auth/route-callers.js';
import { listActivity } from '../../shared/organizations/activity-log.js';
import { addGroupMember, listGroupMembers, removeGroupMember } from '../../shared/organizations/group-members.js';
import { createGroup, getGroup, listGroups, updateGroup } from '../../shared/organizations/groups.js';
import { addMember, changeRole, listMembers, removeMember } from '../../shared/organizations/members.js';
import {
  ActivityQuery,
  AddGroupMemberBody,
  AddMemberBody,
  ChangeRoleBody,
  CreateGroupBody,
  CreateOrganizationBody,
  ListGroupsQuery,
  PageQuery,
  UpdateGroupBody,
} from '../../shared/organizations/requests.js';
import { createOrganization, myMemberships } from '../../shared/organizations/organizations.js';
import type { AdminDeps } from '../deps.js';
import { type AdminRoute, type AdminRouterContext, del, get, patch, post } from '../http/route.js';
import { parse } from '../http/validate.js';

type Ctx = AdminRouterContext;
type Handler = (ctx: Ctx, caller: ApiKeyCaller) => Promise<void>;

/** A path parameter as the router decoded it ('' when absent, which names nothing). */
const param = (ctx: Ctx, name: string): string => ctx.params[name] ?? '';

export function orgMembersRoutes({ ctx: svc }: AdminDeps): AdminRoute[] {
  const createOrg: Handler = async (ctx, caller) => {
    const { name } = parse(CreateOrganizationBody, ctx.request.body);
    ctx.status = 201;
    ctx.body = { success: true, organization: await createOrganization(svc, caller.userId, name) };
  };
  const memberships: Handler = async (ctx, caller) => {
    ctx.body = { success: true, memberships: await myMemberships(svc, caller.userId) };
  };

  const addOrgMember: Handler = async (ctx, caller) => {
    const body = parse(AddMemberBody, ctx.request.body);
    ctx.status = 201;
    ctx.body = { success: true, member: await addMember(svc, caller.userId, param(ctx, 'orgId'), body) };
  };
  const listOrgMembers: Handler = async (ctx, caller) => {
    const q = parse(PageQuery, ctx.query, 'query');
    ctx.body = { success: true, ...(await listMembers(svc, caller.userId, param(ctx, 'orgId'), q)) };
  };
  const setRole: Handler = async (ctx, caller) => {
    const { role } = parse(ChangeRoleBody, ctx.request.body);
    const member = await changeRole(svc, caller.userId, param(ctx, 'orgId'), param(ctx, 'memberId'), role);
    ctx.body = { success: true, member };
  };
  const removeOrgMember: Handler = async (ctx, caller) => {
    await removeMember(svc, caller.userId, param(ctx, 'orgId'), param(ctx, 'memberId'));
    ctx.body = { success: true };
  };

  const addGroup: Handler = async (ctx, caller) => {
    const { name } = parse(CreateGroupBody, ctx.request.body);
    ctx.status = 201;
    ctx.body = { success: true, group: await createGroup(svc, caller.userId, param(ctx, 'orgId'), name) };
  };
  const groups: Handler = async (ctx, caller) => {
    const q = parse(ListGroupsQuery, ctx.query, 'query');
    ctx.body = { success: true, ...(await listGroups(svc, caller.userId, param(ctx, 'orgId'), q)) };
  };
  const group: Handler = async (ctx, caller) => {
    ctx.body = {
      success: true,
      group: await getGroup(svc, caller.userId, param(ctx, 'orgId'), param(ctx, 'groupId')),
    };
  };
  const changeGroup: Handler = async (ctx, caller) => {
    const change = parse(UpdateGroupBody, ctx.request.body);
    const g = await updateGroup(svc, caller.userId, param(ctx, 'orgId'), param(ctx, 'groupId'), change);
    ctx.body = { success: true, group: g };
  };
  const deactivateGroup: Handler = async (ctx, caller) => {
    const g = await updateGroup(svc, caller.userId, param(ctx, 'orgId'), param(ctx, 'groupId'), { active: false });
    ctx.body = { success: true, group: g };
  };

  const addToGroup: Handler = async (ctx, caller) => {
    const { memberId } = parse(AddGroupMemberBody, ctx.request.body);
    await addGroupMember(svc, caller.userId, param(ctx, 'orgId'), param(ctx, 'groupId'), memberId);
    ctx.status = 201;
    ctx.body = { success: true };
  };
  const removeFromGroup: Handler = async (ctx, caller) => {
    const [orgId, groupId, memberId] = [param(ctx, 'orgId'), param(ctx, 'groupId'), param(ctx, 'memberId')];
    await removeGroupMember(svc, caller.userId, orgId, groupId, memberId);
    ctx.body = { success: true };
  };
  const groupMembers: Handler = async (ctx, caller) => {
    const members = await listGroupMembers(svc, caller.userId, param(ctx, 'orgId'), param(ctx, 'groupId'));
    ctx.body = { success: true, members };
  };

  const activity: Handler = async (ctx, caller) => {
    const q = parse(ActivityQuery, ctx.query, 'query');
    ctx.body = { success: true, ...(await listActivity(svc, caller.userId, param(ctx, 'orgId'), q)) };
  };

  const org = '/organizations/:orgId';
  const grp = `${org}/groups/:groupId`;
  return [
    post('/organizations', API_KEY, createOrg),
    // Before any /organizations/:orgId GET, so `my-memberships` is never read as an orgId.
    get('/organizations/my-memberships', API_KEY, memberships),
    post(`${org}/members`, API_KEY, addOrgMember),
    get(`${org}/members`, API_KEY, listOrgMembers),
    patch(`${org}/members/:memberId`, API_KEY, setRole),
    del(`${org}/members/:memberId`, API_KEY, removeOrgMember),
    post(`${org}/groups`, API_KEY, addGroup),
    get(`${org}/groups`, API_KEY, groups),
    get(grp, API_KEY, group),
    patch(grp, API_KEY, changeGroup),
    del(grp, API_KEY, deactivateGroup),
    post(`${grp}/members`, API_KEY, addToGroup),
    get(`${grp}/members`, API_KEY, groupMembers),
    del(`${grp}/members/:memberId`, API_KEY, removeFromGroup),
    get(`${org}/activity`, API_KEY, activity),
  ];
}
