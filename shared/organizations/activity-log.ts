// Reading the organization's activity log: Admins only (it names every member, group and budget of the
// organization, including groups a Member is not in), newest first, filtered by event, actor and time.
import type { ServiceContext } from '../context.js';
import { emSql } from '../db/sql.js';
import { type ActivityRow, activityPage } from '../org-activity/store.js';
import { adminOf } from './org-caller.js';
import type { Paged } from './members.js';
import type { ActivityInput } from './requests.js';

/** An entry on the wire: the stored row, its time in ISO 8601. */
export type ActivityView = Omit<ActivityRow, 'createdAt'> & { readonly createdAt: string };

export async function listActivity(
  ctx: ServiceContext,
  userId: string,
  orgId: string,
  q: ActivityInput,
): Promise<{ activity: ActivityView[]; meta: Paged }> {
  await adminOf(ctx, userId, orgId);
  const { rows, total } = await activityPage(
    emSql(ctx.db.em()),
    { orgId, eventType: q.eventType, actorUserId: q.actorUserId, from: q.from, to: q.to },
    { limit: q.limit, offset: (q.page - 1) * q.limit },
  );
  return {
    activity: rows.map((r) => ({
      id: r.id,
      eventType: r.eventType,
      actorUserId: r.actorUserId ?? null,
      subjectType: r.subjectType,
      subjectId: r.subjectId,
      details: r.details,
      createdAt: r.createdAt.toISOString(),
    })),
    meta: { total, page: q.page, limit: q.limit },
  };
}
