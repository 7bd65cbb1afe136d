// The organization's activity log: append-only rows of who did what (members, groups, shares, budget changes) and
// what the service noticed (a budget crossing its alert threshold, a budget exhausted).
import { uuidv7 } from '../ids.js';
import { type ActivityEvent, OrgActivity } from '../db/entities/index.js';
import type { Em } from '../db/orm.js';

export interface ActivityEntry {
  readonly orgId: string;
  readonly eventType: ActivityEvent;
  /** null when the service itself noticed it (an alert). */
  readonly actorUserId: string | null;
  readonly subjectType: 'organization' | 'member' | 'group' | 'wallet' | 'payment_method' | 'budget';
  readonly subjectId: string;
  readonly details?: Record<string, string | number | boolean | null>;
}

/** Appends one entry inside the caller's transaction `em`, so the log has it exactly when the change committed. */
export function recordActivity(em: Em, e: ActivityEntry, now: Date): void {
  em.create(OrgActivity, {
    id: uuidv7(),
    orgId: e.orgId,
    eventType: e.eventType,
    actorUserId: e.actorUserId,
    subjectType: e.subjectType,
    subjectId: e.subjectId,
    details: e.details ?? {},
    createdAt: now,
  });
}
