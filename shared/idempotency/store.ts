// The Idempotency-Key store: the durable claim that makes a retried money-moving POST answer once. The claim is a
// row inserted under the unique key (user, scope, key hash), so of any number of requests with one key, in any
// number of processes on one database, exactly one inserts it and runs; the others read that row: its stored
// answer (a replay), a different fingerprint (409 BCK.IDEMPOTENCY.0001), or no answer yet (409
// BCK.IDEMPOTENCY.0002). Nothing is held in process memory.
//
// Which answers are kept (Stripe's rule): 2xx and 4xx. A 4xx is the answer to that request (a replay must not turn
// a refusal into a success later, once the client's retry finds the balance topped up); a 5xx or a thrown error
// says nothing about the request, so the claim is deleted (`abandon`) and the client may retry with the same key.
// A process that dies while running a claimed request leaves the row `running`: whether its effect committed is
// unknown, so the key stays refused (409 BCK.IDEMPOTENCY.0002) until it expires rather than risk a second effect.
import { z } from 'zod';
import type { ServiceContext } from '../context.js';
import { sha256Hex } from '../crypto/hashing.js';
import type { SqlTx } from '../db/sql.js';
import { uuidv7 } from '../ids.js';
import { countCacheLookup } from '../metrics/caches.js';

/** The sealed column: the headers the handler set and the body as sent (JSON text), checked when read back. */
const SealedAnswer = z.object({ headers: z.record(z.string(), z.string()), body: z.string() });

/** An answer as replayed: status, the headers the handler set, the body as sent (JSON text). */
export interface StoredAnswer {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

export interface ClaimRequest {
  readonly userId: string;
  /** Method and route pattern: a key names one request of one route. */
  readonly scope: string;
  readonly key: string;
  readonly fingerprint: string;
}

export type ClaimResult =
  | { readonly type: 'claimed'; readonly id: string }
  | { readonly type: 'replay'; readonly answer: StoredAnswer }
  | { readonly type: 'mismatch' }
  | { readonly type: 'inProgress' };

/** The key as stored: SHA-256 of the user and the key (a key can be as telling as a secret; only equality matters). */
export const keyHashOf = (userId: string, key: string): string => sha256Hex(`${userId}\n${key}`);

const INSERT =
  'insert into idempotency_key (id, user_id, scope, key_hash, fingerprint, state, created_at, expires_at) ' +
  "values (?, ?, ?, ?, ?, 'running', ?, ?) on conflict do nothing";
const SELECT =
  'select id, fingerprint, state, response_status, response, case when expires_at <= ? then 1 else 0 end as expired ' +
  'from idempotency_key where user_id = ? and scope = ? and key_hash = ?';
const DELETE_EXPIRED = 'delete from idempotency_key where id = ? and expires_at <= ?';

type Attempt =
  | Exclude<ClaimResult, { readonly type: 'replay' }>
  | { readonly type: 'stored'; readonly status: number; readonly sealed: string }
  | { readonly type: 'again' };

async function attempt(ctx: ServiceContext, tx: SqlTx, r: ClaimRequest, keyHash: string, now: Date): Promise<Attempt> {
  const id = uuidv7(now.getTime());
  const expires = new Date(now.getTime() + ctx.config.IDEMPOTENCY_KEEP_SECS * 1000);
  if ((await tx.run(INSERT, [id, r.userId, r.scope, keyHash, r.fingerprint, now, expires])) === 1) {
    return { type: 'claimed', id };
  }
  const [row] = await tx.all(SELECT, [now, r.userId, r.scope, keyHash]);
  // Abandoned between the insert and the read: try again.
  if (row === undefined) return { type: 'again' };
  // Past its time but not purged yet: the key is free again.
  if (Number(row.expired) === 1) {
    await tx.run(DELETE_EXPIRED, [String(row.id), now]);
    return { type: 'again' };
  }
  if (row.fingerprint !== r.fingerprint) return { type: 'mismatch' };
  if (row.state !== 'done' || typeof row.response !== 'string') return { type: 'inProgress' };
  return { type: 'stored', status: Number(row.response_status), sealed: row.response };
}

/** Claims (user, scope, key) for this request, or tells what the row already there says. */
export async function claim(ctx: ServiceContext, r: ClaimRequest): Promise<ClaimResult> {
  const keyHash = keyHashOf(r.userId, r.key);
  // Each turn either inserts, or finds a row; a row can vanish (abandoned, expired) only so many times in a row
  // before a request gives up and is told to retry.
  for (let i = 0; i < 3; i++) {
    const now = ctx.now();
    const result = await ctx.db.sql.transaction((tx) => attempt(ctx, tx, r, keyHash, now));
    if (result.type === 'again') continue;
    if (result.type === 'claimed' || result.type === 'stored')
      countCacheLookup('idempotency_key', result.type === 'stored');
    if (result.type !== 'stored') return result;
    // Opened outside the transaction: its work runs statements only (shared/db/sql.ts).
    const { headers, body } = SealedAnswer.parse(JSON.parse(ctx.box.open(result.sealed)));
    return { type: 'replay', answer: { status: result.status, headers, body } };
  }
  return { type: 'inProgress' };
}

/** Stores the answer of a claimed request (sealed); false if the claim is gone (it was purged meanwhile). */
export async function complete(ctx: ServiceContext, id: string, answer: StoredAnswer): Promise<boolean> {
  const sealed = ctx.box.seal(JSON.stringify({ headers: answer.headers, body: answer.body }));
  const n = await ctx.db.sql.transaction((tx) =>
    tx.run(
      "update idempotency_key set state = 'done', response_status = ?, response = ? where id = ? and state = 'running'",
      [answer.status, sealed, id],
    ),
  );
  return n === 1;
}

/** Gives the key back after an answer that is not kept (5xx, a thrown error): the client may retry with it. */
export async function abandon(ctx: ServiceContext, id: string): Promise<void> {
  await ctx.db.sql.transaction((tx) => tx.run("delete from idempotency_key where id = ? and state = 'running'", [id]));
}

/** Rows deleted per statement: bounds how long one purge holds the write lock. */
const PURGE_BATCH = 500;

/**
 * Deletes the rows expired before `now`, in batches of one DELETE each (both databases lack a portable
 * DELETE ... LIMIT; the subquery rides the expires_at index). Stops after `maxBatches`; resolves with the count.
 */
export async function purgeExpired(ctx: ServiceContext, now: Date, maxBatches = 100): Promise<number> {
  let total = 0;
  for (let i = 0; i < maxBatches; i++) {
    const n = await ctx.db.sql.transaction((tx) =>
      tx.run('delete from idempotency_key where id in (select id from idempotency_key where expires_at < ? limit ?)', [
        now,
        PURGE_BATCH,
      ]),
    );
    total += n;
    if (n < PURGE_BATCH) break;
  }
  return total;
}
