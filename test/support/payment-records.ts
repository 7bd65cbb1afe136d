// The records a paid load must leave whole, however its processes ended (SIGKILL mid-call included): what a
// payments team checks after a crash. Shared by the crash tests (test/operations/crash-recovery.test.ts,
// test/operations/proxy-workers-kill.test.ts); mode B (`/router/route`) payments on the ledger backend, none of them refused.
import type { ExecutionContext } from 'ava';
import { TokenLedger } from '../../shared/db/entities/index.js';
import { delegationRow, delegationTransactions, paymentRows } from './router-fixtures.js';
import type { Stack } from './stack.js';

/** A transfer the merchants' stub chain settled (an EIP-3009 authorization used). */
export interface SettledTransfer {
  readonly nonce: string;
}

export type PaymentRows = Awaited<ReturnType<typeof paymentRows>>;

/**
 * Asserts, for the payments of `userId` from `delegationId`, and returns them:
 * - one payment per requestId, none of them half-written: each is Issued or Settled, with exactly one merchant-leg
 *   debit of its amount in the token ledger, and a fee-leg debit exactly when its fee leg is settled;
 * - the cap's journal: one reserve of each payment's capChargedCents, a release only of a released fee leg's share,
 *   no entry for anything else, and the delegation's spent cents equal to the journal's sum;
 * - every authorization the merchant settled was settled once and is one of these payments.
 */
export async function assertPaymentsWhole(
  t: ExecutionContext,
  s: Stack,
  who: { userId: string; walletAddress: string; delegationId: string },
  settled: readonly SettledTransfer[],
): Promise<PaymentRows> {
  const rows = (await paymentRows(s, who.userId)).filter((r) => r.delegationId === who.delegationId);
  const problems: string[] = [];
  const byRequest = new Map<string | null | undefined, number>();
  for (const r of rows) byRequest.set(r.requestId, (byRequest.get(r.requestId) ?? 0) + 1);
  for (const [requestId, n] of byRequest) if (n > 1) problems.push(`requestId ${requestId} paid ${n} times`);

  const debits = await s.ctx.db.em().find(TokenLedger, {
    reference: { $in: rows.map((r) => r.id) },
    address: who.walletAddress,
    delta: { $lt: 0n },
  });
  const journal = await delegationTransactions(s, who.delegationId);
  const ids = new Set(rows.map((r) => r.id));
  for (const x of journal) {
    if (typeof x.reference !== 'string' || !ids.has(x.reference))
      problems.push(`journal ${x.kind} ${x.amountCents} of no payment`);
  }
  let expectedSpent = 0n;
  for (const r of rows) {
    if (r.status !== 'Issued' && r.status !== 'Settled') problems.push(`${r.id} is ${r.status}`);
    const mine = debits.filter((d) => d.reference === r.id);
    const merchantLeg = mine.filter((d) => d.kind === 'router');
    if (merchantLeg.length !== 1 || merchantLeg[0]?.delta !== -r.amount)
      problems.push(`${r.id}: merchant-leg debits ${merchantLeg.map((d) => d.delta).join(', ') || 'none'}`);
    const feeLeg = mine.filter((d) => d.kind === 'router_fee').map((d) => d.delta);
    const feeExpected = r.feeStatus === 'settled' && r.feeAmount > 0n ? [-r.feeAmount] : [];
    if (feeLeg.join() !== feeExpected.join())
      problems.push(`${r.id}: fee ${r.feeStatus}, fee-leg debits ${feeLeg.join(', ') || 'none'}`);
    const entries = journal.filter((x) => x.reference === r.id);
    const reserves = entries.filter((x) => x.kind === 'reserve').map((x) => x.amountCents);
    if (reserves.join() !== (r.capChargedCents > 0n ? String(r.capChargedCents) : ''))
      problems.push(`${r.id}: cap ${r.capChargedCents} reserved as ${reserves.join(', ') || 'nothing'}`);
    const released = entries.filter((x) => x.kind === 'release').reduce((sum, x) => sum - x.amountCents, 0n);
    const releasable = r.feeStatus === 'released' ? r.feeCents : 0n;
    if (released !== releasable) problems.push(`${r.id}: fee ${r.feeStatus}, ${released} cents released`);
    expectedSpent += r.capChargedCents - releasable;
  }
  t.deepEqual(problems, [], 'every payment whole');

  const spent = (await delegationRow(s, who.delegationId)).amountSpentCents;
  t.is(
    spent,
    journal.reduce((sum, x) => sum + x.amountCents, 0n),
    "the delegation's spent cents are its journal's sum",
  );
  t.is(spent, expectedSpent, "the delegation's spent cents are its payments' cap charges");

  const nonces = settled.map((x) => x.nonce.toLowerCase());
  t.is(new Set(nonces).size, nonces.length, 'no authorization settled twice');
  const ours = new Set(rows.map((r) => r.authNonce?.toLowerCase()));
  t.deepEqual(
    nonces.filter((n) => !ours.has(n)),
    [],
    'every settled authorization is one of our payments',
  );
  return rows;
}
