// The forms of the path parameters whose routes answer a malformed value with the 404 of an unknown one (a planId
// that is not a decimal id, an agentId that is not an agent DID, an id that is not a UUID): the routes parse no
// schema for them, so these say what a parameter that can name something looks like.
import { z } from 'zod';

/** A plan id: the plan's integer key, in decimal. */
export const PlanIdPath = z.string().regex(/^[1-9][0-9]{0,9}$/);

/** An agent id: `did:payroute:<environment>:<32 hex digits>`. */
export const AgentIdPath = z.string().regex(/^did:payroute:(sandbox|live):[0-9a-f]{32}$/);

/** A row's id (organizations, their members, groups, wallets, budgets, cards; router payments). */
export const UuidPath = z.uuid();
