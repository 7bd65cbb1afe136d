// The organization endpoints' inputs (members, groups, the activity log), checked at the boundary: a field that
// does not fit is a 400 naming it, before any service or database sees it.
import { z } from 'zod';
import { Email } from '../accounts/users.js';
import { BUDGET_INTERVALS, ORG_ROLES } from '../db/entities/index.js';
import { LimitCents } from '../money.js';
import { CURRENCIES } from '../spend/currency.js';
import { line, wholeNumber } from '../text.js';
import { ACTIVITY_EVENTS } from '../db/entities/index.js';

/** Names are shown in lists and in the activity log: one line, trimmed, never empty. */
const Name = line(200, { trim: true }).min(1);

/** Page `page` of `limit` rows (1-based; 20 rows unless asked, at most 100). */
const PageFields = {
  page: wholeNumber(1, 1_000_000).default(1),
  limit: wholeNumber(1, 100).default(20),
};

export const CreateOrganizationBody = z.object({ name: Name }).strict();

/**
 * Exactly one of userId and email names the user; the role is Member unless said otherwise (an Admin is the
 * exception an Admin grants on purpose).
 */
export const AddMemberBody = z
  .object({
    userId: z.uuid().optional(),
    email: Email.optional(),
    role: z.enum(ORG_ROLES).default('Member'),
  })
  .strict()
  .refine((b) => (b.userId === undefined) !== (b.email === undefined), {
    message: 'exactly one of userId and email is required',
  });

export const ChangeRoleBody = z.object({ role: z.enum(ORG_ROLES) }).strict();

export const CreateGroupBody = z.object({ name: Name }).strict();

export const UpdateGroupBody = z
  .object({ name: Name.optional(), active: z.boolean().optional() })
  .strict()
  .refine((b) => b.name !== undefined || b.active !== undefined, { message: 'name or active is required' });

export const AddGroupMemberBody = z.object({ memberId: z.uuid() }).strict();

export const PageQuery = z.object(PageFields);

export const ListGroupsQuery = z.object({
  ...PageFields,
  includeInactive: z
    .enum(['true', 'false'])
    .default('false')
    .transform((v) => v === 'true'),
});

export const ActivityQuery = z
  .object({
    ...PageFields,
    eventType: z.enum(ACTIVITY_EVENTS).optional(),
    actorUserId: z.uuid().optional(),
    /** From (inclusive) and to (exclusive), ISO 8601 with a time zone. */
    from: z.iso
      .datetime({ offset: true })
      .transform((s) => new Date(s))
      .optional(),
    to: z.iso
      .datetime({ offset: true })
      .transform((s) => new Date(s))
      .optional(),
  })
  .refine((q) => q.from === undefined || q.to === undefined || q.from < q.to, {
    message: 'from must be before to',
    path: ['from'],
  });

export type AddMemberInput = z.output<typeof AddMemberBody>;
export type UpdateGroupInput = z.output<typeof UpdateGroupBody>;
export type PageInput = z.output<typeof PageQuery>;
export type ListGroupsInput = z.output<typeof ListGroupsQuery>;
export type ActivityInput = z.output<typeof ActivityQuery>;

/** A percentage of the limit; null: no alert. */
const ThresholdPct = z.number().int().min(1).max(100).nullable();
/** ISO 4217 codes are written upper-case as often as not; stored lower-case, as delegations' are. */
const Currency = z
  .string()
  .max(8)
  .transform((s) => s.toLowerCase())
  .pipe(z.enum(CURRENCIES));
const Interval = z.enum(BUDGET_INTERVALS);

export const CreateBudgetBody = z
  .object({
    spendingLimitCents: LimitCents,
    currency: Currency,
    interval: Interval.default('month'),
    alertThresholdPct: ThresholdPct.optional(),
  })
  .strict();
export type CreateBudgetInput = z.output<typeof CreateBudgetBody>;

export const UpdateBudgetBody = z
  .object({
    spendingLimitCents: LimitCents.optional(),
    alertThresholdPct: ThresholdPct.optional(),
    interval: Interval.optional(),
  })
  .strict()
  .refine(
    (b) => b.spendingLimitCents !== undefined || b.alertThresholdPct !== undefined || b.interval !== undefined,
    'name at least one of spendingLimitCents, alertThresholdPct, interval',
  );
export type UpdateBudgetInput = z.output<typeof UpdateBudgetBody>;
