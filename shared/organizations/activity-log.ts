// Reading the organization's activity log: Admins only (it names every member, group and budget of the
// organization, including groups a Member is not in), newest first, filtered by event, actor and time.
import type { ServiceContext } from '../context.js';
import { OrgActivity } from '../db/entities/index.js';
import { adminOf } from './org-caller.js';
import type { Paged } from './members.js';
import type { ActivityInput } from './requests.js';

export interface ActivityView {
  readonly id: string;
  readonly eventType: string;
  readonly actorUserId: string | null;
  readonly subjectType: string;
  readonly subjectId: string;
  readonly details: Record<string, string | number | boolean | null>;
  readonly createdAt: string;
}

export async function listActivity(
  ctx: ServiceContext,
  userId: string,
  orgId: string,
  q: ActivityInput,
): Promise<{ activity: ActivityView[]; meta: Paged }> {
  await adminOf(ctx, userId, orgId);
  const createdAt: Record<string, Date> = {};
  if (q.from !== undefined) createdAt.$gte = q.from;
  if (q.to !== undefined) createdAt.$lt = q.to;
  const where = {
    orgId,
    ...(q.eventType === undefined ? {} : { eventType: q.eventType }),
    ...(q.actorUserId === undefined ? {} : { actorUserId: q.actorUserId }),
    ...(Object.keys(createdAt).length === 0 ? {} : { createdAt }),
  };
  // The id breaks ties between entries of one millisecond, so pages neither repeat nor skip an entry.
  const [rows, total] = await ctx.db.em().findAndCount(OrgActivity, where, {
    orderBy: { createdAt: 'desc', id: 'desc' },
    limit: q.limit,
    offset: (q.page - 1) * q.limit,
  });
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
