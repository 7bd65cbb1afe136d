// Organization wallets, their shares with groups, and enrolled cards, through the real processes on SQLite and
// PostgreSQL: every endpoint with every role (an Admin, a Member of a group the wallet is shared with, a Member
// not in it, an outsider, an Admin of another organization), exact answers, the rows written (the wallet key
// sealed, the activity log), balances after a faucet, bad bodies, other organizations' ids, and concurrent
// shares and unshares of one pair.
import test from 'ava';
import fc from 'fast-check';
import { privateKeyToAccount } from 'viem/accounts';
import { NETWORKS, usdcOf } from '../../shared/assets.js';
import {
  OrgActivity,
  OrgGroup,
  OrgPaymentMethod,
  OrgPaymentMethodShare,
  OrgWallet,
  OrgWalletShare,
} from '../../shared/db/entities/index.js';
import { enrollPaymentMethodBody } from '../../shared/organizations/payment-methods.js';
import { orgWalletKeyOf } from '../../shared/organizations/wallets.js';
import { faucet } from '../../shared/settlement/token-ledger.js';
import { runCli } from '../support/cli.js';
import { type ApiClient, type ApiResponse, apiClient } from '../support/http.js';
import { forEachDb } from '../support/matrix.js';
import { makeGroup, makeMember, makeOrg, makeWallet } from '../support/orgs.js';
import { type Stack, newUsers } from '../support/stack.js';

const RUNS = Math.max(20, Math.round(Number(process.env.FUZZ_RUNS ?? 1000) / 20));
const NO_ID = '0194f3f6-2a5e-7c4e-9b1a-6f1d2c3b4a59';
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const ADDRESS = /^0x[0-9a-fA-F]{40}$/;

/**
 * An organization with its Admin, a Member in group `groupId` (which `walletId` is shared with), a Member only in
 * `otherGroupId`, an outsider, and the Admin of another organization with a group, a wallet and a card of its own.
 */
async function world(s: Stack) {
  const [admin, inGroup, notIn, outsider, otherAdmin] = await newUsers(s, 5);
  const { orgId } = await makeOrg(s, admin.userId);
  const groupId = await makeGroup(s, orgId, [await makeMember(s, orgId, inGroup.userId)], 'Sales');
  const otherGroupId = await makeGroup(s, orgId, [await makeMember(s, orgId, notIn.userId)], 'Ops');
  const shared = await makeWallet(s, orgId, 'Sales wallet', [groupId]);
  const unshared = await makeWallet(s, orgId, 'Treasury');
  const other = await makeOrg(s, otherAdmin.userId, 'Other');
  const foreignGroupId = await makeGroup(s, other.orgId);
  const foreignWallet = await makeWallet(s, other.orgId, 'Foreign', [foreignGroupId]);
  const foreignCard = await otherAdmin.api.post(`/organizations/${other.orgId}/payment-methods`, card());
  return {
    orgId,
    groupId,
    otherGroupId,
    walletId: shared.walletId,
    address: shared.address,
    unsharedWalletId: unshared.walletId,
    admin,
    inGroup,
    notIn,
    outsider,
    otherAdmin,
    otherOrgId: other.orgId,
    foreignGroupId,
    foreignWalletId: foreignWallet.walletId,
    foreignCardId: foreignCard.body.paymentMethod.paymentMethodId as string,
  };
}

const card = (over: Record<string, unknown> = {}) => ({
  brand: 'visa',
  last4: '4242',
  expMonth: 12,
  expYear: new Date().getUTCFullYear() + 2,
  ...over,
});

/** An answer as its status and error code (the text when it has no code, to show what came instead). */
function refused(r: ApiResponse): { status: number; code: string } {
  return { status: r.status, code: (r.body as { code?: string }).code ?? r.text.slice(0, 200) };
}

const expectRefusal = (status: number, code: string) => ({ status, code });

async function activity(s: Stack, orgId: string, eventType: string) {
  return s.ctx.db.em().find(OrgActivity, { orgId, eventType }, { orderBy: { createdAt: 'asc', id: 'asc' } });
}

async function deactivate(s: Stack, groupId: string): Promise<void> {
  await s.ctx.db.em().nativeUpdate(OrgGroup, { id: groupId }, { active: false });
}

/** Card bodies near the valid ones for a clock in `year`: mostly plausible fields, sometimes any JSON, missing
 *  fields, or a field the body does not have. */
function cardBody(year: number) {
  const field = <T>(good: fc.Arbitrary<T>, bad: fc.Arbitrary<unknown>) =>
    fc.oneof({ arbitrary: good, weight: 4 }, { arbitrary: fc.oneof(bad, fc.jsonValue({ maxDepth: 1 })), weight: 1 });
  const fields = {
    brand: field(fc.constantFrom('visa', 'mastercard', 'amex', 'discover'), fc.constantFrom('VISA', 'diners', '')),
    last4: field(fc.stringMatching(/^[0-9]{4}$/), fc.stringMatching(/^[0-9]{0,6}$/)),
    expMonth: field(fc.integer({ min: 1, max: 12 }), fc.oneof(fc.integer({ min: -1, max: 14 }), fc.double())),
    expYear: field(fc.integer({ min: year, max: year + 20 }), fc.integer({ min: year - 3, max: year + 23 })),
  };
  const complete = fc.record(fields);
  const partial = fc.record(fields, { requiredKeys: [] });
  const extra = fc.oneof(
    { arbitrary: fc.constant(undefined), weight: 3 },
    { arbitrary: fc.tuple(fc.constantFrom('cvc', 'number', 'Brand', 'last_4', ' brand'), fc.string()), weight: 1 },
  );
  return fc
    .tuple(fc.oneof({ arbitrary: complete, weight: 3 }, { arbitrary: partial, weight: 1 }), extra)
    .map(([b, x]): Record<string, unknown> => (x === undefined ? b : { ...b, [x[0]]: x[1] }));
}

const BRANDS: readonly unknown[] = ['visa', 'mastercard', 'amex', 'discover'];

/** The card rules written out by hand, to check the schema against. */
function cardIsValid(b: Record<string, unknown>, now: Date): boolean {
  const year = now.getUTCFullYear();
  const month = now.getUTCMonth() + 1;
  const keys = Object.keys(b).sort();
  if (keys.join() !== 'brand,expMonth,expYear,last4') return false;
  const { brand, last4, expMonth, expYear } = b;
  if (!BRANDS.includes(brand)) return false;
  if (typeof last4 !== 'string' || !/^[0-9]{4}$/.test(last4)) return false;
  if (typeof expMonth !== 'number' || !Number.isInteger(expMonth) || expMonth < 1 || expMonth > 12) return false;
  if (typeof expYear !== 'number' || !Number.isInteger(expYear) || expYear < year || expYear > year + 20) return false;
  return expYear > year || expMonth >= month;
}

test(`the card body schema agrees with the rules written out (${RUNS * 20} bodies, clocks 2000-2100)`, (t) => {
  fc.assert(
    fc.property(
      fc.date({ min: new Date('2000-01-01T00:00:00Z'), max: new Date('2100-12-31T23:59:59Z'), noInvalidDate: true }),
      fc.integer({ min: 0, max: 2 ** 31 - 1 }),
      (now, seed) => {
        const [b] = fc.sample(cardBody(now.getUTCFullYear()), { numRuns: 1, seed });
        if (b === undefined) return false;
        return enrollPaymentMethodBody(now).safeParse(b).success === cardIsValid(b, now);
      },
    ),
    { numRuns: RUNS * 20 },
  );
  t.pass();
});

forEachDb(({ stack, test }) => {
  test('an Admin creates a custodial wallet: 201, the key stored sealed, wallet.created recorded', async (t) => {
    const s = stack();
    const w = await world(s);
    const r = await w.admin.api.post(`/organizations/${w.orgId}/wallets`, { label: '  Marketing  ' });
    t.is(r.status, 201, r.text);
    t.deepEqual(Object.keys(r.body), ['success', 'wallet']);
    t.true(r.body.success);
    const { walletId, label, address, createdAt } = r.body.wallet;
    t.deepEqual(Object.keys(r.body.wallet), ['walletId', 'label', 'address', 'createdAt']);
    t.is(label, 'Marketing', 'trimmed');
    t.regex(address, ADDRESS);
    t.regex(createdAt, ISO);

    const row = await s.ctx.db.em().findOneOrFail(OrgWallet, { id: walletId });
    t.is(row.orgId, w.orgId);
    t.is(row.address, address);
    const key = await orgWalletKeyOf(s.ctx, walletId);
    t.regex(key, /^0x[0-9a-f]{64}$/);
    t.is(privateKeyToAccount(key).address, address, 'the sealed key is the address key');
    t.false(row.walletKeyEnc.includes(key.slice(2)), 'the row does not hold the plain key');
    t.is(s.ctx.box.open(row.walletKeyEnc), key);
    t.false(r.text.includes(key.slice(2)), 'the answer does not hold the key');

    const created = await activity(s, w.orgId, 'wallet.created');
    t.is(created.length, 1);
    t.like(created[0], { actorUserId: w.admin.userId, subjectType: 'wallet', subjectId: walletId });
    t.deepEqual(created[0]?.details, { label: 'Marketing', address });

    const keyOfNothing = await t.throwsAsync(orgWalletKeyOf(s.ctx, NO_ID));
    t.is((keyOfNothing as { code?: string }).code, 'BCK.ORG.0005');
  });

  test('only an Admin creates a wallet: Members 403, outsiders and other Admins 404, nothing written', async (t) => {
    const s = stack();
    const w = await world(s);
    const path = `/organizations/${w.orgId}/wallets`;
    t.deepEqual(refused(await w.inGroup.api.post(path, { label: 'x' })), expectRefusal(403, 'BCK.ORG.0002'));
    t.deepEqual(refused(await w.notIn.api.post(path, { label: 'x' })), expectRefusal(403, 'BCK.ORG.0002'));
    t.deepEqual(refused(await w.outsider.api.post(path, { label: 'x' })), expectRefusal(404, 'BCK.ORG.0001'));
    t.deepEqual(refused(await w.otherAdmin.api.post(path, { label: 'x' })), expectRefusal(404, 'BCK.ORG.0001'));
    t.deepEqual(
      refused(await w.admin.api.post('/organizations/not-an-org/wallets', { label: 'x' })),
      expectRefusal(404, 'BCK.ORG.0001'),
    );
    t.deepEqual(
      refused(await w.admin.api.post(`/organizations/${NO_ID}/wallets`, { label: 'x' })),
      expectRefusal(404, 'BCK.ORG.0001'),
    );
    t.is(await s.ctx.db.em().count(OrgWallet, { orgId: w.orgId }), 2, 'the two of the world only');
    t.is((await activity(s, w.orgId, 'wallet.created')).length, 0);
  });

  test('a bad wallet body is 400 BCK.HTTP.0400', async (t) => {
    const s = stack();
    const w = await world(s);
    const path = `/organizations/${w.orgId}/wallets`;
    for (const body of [
      {},
      { label: '' },
      { label: '   ' },
      { label: 'a'.repeat(101) },
      { label: 'a\u0000b' },
      { label: 'a\u001b[31m' },
      { label: '\ud800' },
      { label: 5 },
      { label: null },
      { label: 'ok', extra: true },
      [],
      'label',
    ]) {
      const r = await w.admin.api.post(path, body);
      t.deepEqual(refused(r), expectRefusal(400, 'BCK.HTTP.0400'), JSON.stringify(body));
    }
    t.is(await s.ctx.db.em().count(OrgWallet, { orgId: w.orgId }), 2);
  });

  test('listing wallets: Admins see all, a Member those shared with their active groups', async (t) => {
    const s = stack();
    const w = await world(s);
    const path = `/organizations/${w.orgId}/wallets`;
    const all = await w.admin.api.get(path);
    t.is(all.status, 200);
    t.deepEqual(Object.keys(all.body), ['success', 'wallets']);
    t.true(all.body.success);
    t.deepEqual(
      all.body.wallets.map((x: { walletId: string }) => x.walletId),
      [w.walletId, w.unsharedWalletId],
    );
    const rows = await s.ctx.db.em().find(OrgWallet, { orgId: w.orgId });
    const byId = new Map(rows.map((r) => [r.id, r]));
    for (const x of all.body.wallets) {
      const row = byId.get(x.walletId);
      t.deepEqual(x, {
        walletId: row?.id,
        label: row?.label,
        address: row?.address,
        createdAt: row?.createdAt.toISOString(),
      });
    }
    const mine = await w.inGroup.api.get(path);
    t.deepEqual(mine.body, { success: true, wallets: [all.body.wallets[0]] });
    t.deepEqual((await w.notIn.api.get(path)).body, { success: true, wallets: [] });
    t.deepEqual(refused(await w.outsider.api.get(path)), expectRefusal(404, 'BCK.ORG.0001'));
    t.deepEqual(refused(await w.otherAdmin.api.get(path)), expectRefusal(404, 'BCK.ORG.0001'));
    t.deepEqual((await w.otherAdmin.api.get(`/organizations/${w.otherOrgId}/wallets`)).body.wallets.length, 1);

    // A deactivated group opens nothing to its members any more.
    await deactivate(s, w.groupId);
    t.deepEqual((await w.inGroup.api.get(path)).body, { success: true, wallets: [] });
    t.deepEqual(refused(await w.inGroup.api.get(`${path}/${w.walletId}/balances`)), expectRefusal(404, 'BCK.ORG.0005'));
  });

  test('balances: every known asset, atomic decimal strings, after a faucet through the CLI', async (t) => {
    const s = stack();
    const w = await world(s);
    const usdc = usdcOf('sandbox');
    const eurc = NETWORKS.sandbox.assets.find((a) => a.symbol === 'EURC');
    if (eurc === undefined) throw new Error('EURC missing');
    const path = `/organizations/${w.orgId}/wallets/${w.walletId}/balances`;
    const expected = (usdcAmount: string, eurcAmount: string) => ({
      success: true,
      walletId: w.walletId,
      address: w.address,
      balances: [
        { asset: usdc.address, symbol: 'USDC', decimals: 6, amount: usdcAmount },
        { asset: eurc.address, symbol: 'EURC', decimals: 6, amount: eurcAmount },
      ],
    });
    t.deepEqual((await w.admin.api.get(path)).body, expected('0', '0'));

    const cli = await runCli(['faucet', '--address', w.address, '--amount', '9007199254740993'], s.env);
    t.is(cli.code, 0, cli.stderr);
    await faucet(s.ctx, w.address, eurc.address, 42n);
    const funded = expected('9007199254740993', '42');
    t.deepEqual((await w.admin.api.get(path)).body, funded, 'past 2^53: no float on the way');
    t.deepEqual((await w.inGroup.api.get(path)).body, funded, 'a Member of a group it is shared with');
    t.deepEqual(refused(await w.notIn.api.get(path)), expectRefusal(404, 'BCK.ORG.0005'));
    t.deepEqual(refused(await w.outsider.api.get(path)), expectRefusal(404, 'BCK.ORG.0001'));
    t.deepEqual(refused(await w.otherAdmin.api.get(path)), expectRefusal(404, 'BCK.ORG.0001'));
    for (const walletId of [w.foreignWalletId, NO_ID, 'not-a-wallet']) {
      const r = await w.admin.api.get(`/organizations/${w.orgId}/wallets/${walletId}/balances`);
      t.deepEqual(refused(r), expectRefusal(404, 'BCK.ORG.0005'), walletId);
    }
  });

  test('sharing a wallet: 200, the row and wallet.shared; twice 409; a deactivated group 409', async (t) => {
    const s = stack();
    const w = await world(s);
    const path = `/organizations/${w.orgId}/wallets/${w.unsharedWalletId}/groups/${w.otherGroupId}`;
    const r = await w.admin.api.post(path);
    t.is(r.status, 200, r.text);
    t.deepEqual(r.body, { success: true });
    const row = await s.ctx.db
      .em()
      .findOneOrFail(OrgWalletShare, { walletId: w.unsharedWalletId, groupId: w.otherGroupId });
    t.is(row.orgId, w.orgId);
    const shared = await activity(s, w.orgId, 'wallet.shared');
    t.is(shared.length, 1);
    t.like(shared[0], { actorUserId: w.admin.userId, subjectType: 'wallet', subjectId: w.unsharedWalletId });
    t.deepEqual(shared[0]?.details, { groupId: w.otherGroupId });
    // The group's Member now sees it.
    t.is((await w.notIn.api.get(`/organizations/${w.orgId}/wallets/${w.unsharedWalletId}/balances`)).status, 200);

    t.deepEqual(refused(await w.admin.api.post(path)), expectRefusal(409, 'BCK.ORG.0008'));
    t.is((await activity(s, w.orgId, 'wallet.shared')).length, 1, 'no second entry');

    const inactive = await makeGroup(s, w.orgId);
    await deactivate(s, inactive);
    const toInactive = `/organizations/${w.orgId}/wallets/${w.walletId}/groups/${inactive}`;
    t.deepEqual(refused(await w.admin.api.post(toInactive)), expectRefusal(409, 'BCK.ORG.0010'));
    t.is(await s.ctx.db.em().count(OrgWalletShare, { groupId: inactive }), 0);
  });

  test('unsharing a wallet: 200, the row gone and wallet.unshared; not shared 404 BCK.ORG.0020', async (t) => {
    const s = stack();
    const w = await world(s);
    const path = `/organizations/${w.orgId}/wallets/${w.walletId}/groups/${w.groupId}`;
    const r = await w.admin.api.del(path);
    t.is(r.status, 200, r.text);
    t.deepEqual(r.body, { success: true });
    t.is(await s.ctx.db.em().count(OrgWalletShare, { walletId: w.walletId }), 0);
    const unshared = await activity(s, w.orgId, 'wallet.unshared');
    t.is(unshared.length, 1);
    t.like(unshared[0], { actorUserId: w.admin.userId, subjectType: 'wallet', subjectId: w.walletId });
    t.deepEqual(unshared[0]?.details, { groupId: w.groupId });
    t.deepEqual(refused(await w.inGroup.api.get(`/organizations/${w.orgId}/wallets/${w.walletId}/balances`)), {
      status: 404,
      code: 'BCK.ORG.0005',
    });
    t.deepEqual(refused(await w.admin.api.del(path)), expectRefusal(404, 'BCK.ORG.0020'));

    // A deactivated group can still lose a share.
    const g = await makeGroup(s, w.orgId);
    t.is((await w.admin.api.post(`/organizations/${w.orgId}/wallets/${w.walletId}/groups/${g}`)).status, 200);
    await deactivate(s, g);
    t.is((await w.admin.api.del(`/organizations/${w.orgId}/wallets/${w.walletId}/groups/${g}`)).status, 200);
  });

  test('share and unshare: Members 403, outsiders and other Admins 404, other organizations’ ids 404', async (t) => {
    const s = stack();
    const w = await world(s);
    const pair = (walletId: string, groupId: string) =>
      `/organizations/${w.orgId}/wallets/${walletId}/groups/${groupId}`;
    for (const send of [(a: ApiClient, p: string) => a.post(p), (a: ApiClient, p: string) => a.del(p)]) {
      const p = pair(w.walletId, w.groupId);
      t.deepEqual(refused(await send(w.inGroup.api, p)), expectRefusal(403, 'BCK.ORG.0002'));
      t.deepEqual(refused(await send(w.notIn.api, p)), expectRefusal(403, 'BCK.ORG.0002'));
      t.deepEqual(refused(await send(w.outsider.api, p)), expectRefusal(404, 'BCK.ORG.0001'));
      t.deepEqual(refused(await send(w.otherAdmin.api, p)), expectRefusal(404, 'BCK.ORG.0001'));
      for (const [walletId, groupId, code] of [
        [w.foreignWalletId, w.groupId, 'BCK.ORG.0005'],
        [NO_ID, w.groupId, 'BCK.ORG.0005'],
        [w.walletId, w.foreignGroupId, 'BCK.ORG.0003'],
        [w.walletId, 'not-a-group', 'BCK.ORG.0003'],
      ] as const) {
        t.deepEqual(refused(await send(w.admin.api, pair(walletId, groupId))), expectRefusal(404, code));
      }
    }
    t.is(await s.ctx.db.em().count(OrgWalletShare, { orgId: w.orgId }), 1, 'the world’s one share, untouched');
    t.is(await s.ctx.db.em().count(OrgWalletShare, { orgId: w.otherOrgId }), 1);
    t.is(
      (await activity(s, w.orgId, 'wallet.shared')).length + (await activity(s, w.orgId, 'wallet.unshared')).length,
      0,
    );
  });

  test('a wallet’s groups: all for an Admin, the caller’s own for a Member', async (t) => {
    const s = stack();
    const w = await world(s);
    t.is(
      (await w.admin.api.post(`/organizations/${w.orgId}/wallets/${w.walletId}/groups/${w.otherGroupId}`)).status,
      200,
    );
    const path = `/organizations/${w.orgId}/wallets/${w.walletId}/groups`;
    t.deepEqual((await w.admin.api.get(path)).body, { success: true, groupIds: [w.groupId, w.otherGroupId] });
    t.deepEqual((await w.inGroup.api.get(path)).body, { success: true, groupIds: [w.groupId] });
    t.deepEqual((await w.notIn.api.get(path)).body, { success: true, groupIds: [w.otherGroupId] });
    const unshared = `/organizations/${w.orgId}/wallets/${w.unsharedWalletId}/groups`;
    t.deepEqual((await w.admin.api.get(unshared)).body, { success: true, groupIds: [] });
    t.deepEqual(refused(await w.inGroup.api.get(unshared)), expectRefusal(404, 'BCK.ORG.0005'));
    t.deepEqual(refused(await w.outsider.api.get(path)), expectRefusal(404, 'BCK.ORG.0001'));
    t.deepEqual(refused(await w.otherAdmin.api.get(path)), expectRefusal(404, 'BCK.ORG.0001'));
    const foreign = `/organizations/${w.orgId}/wallets/${w.foreignWalletId}/groups`;
    t.deepEqual(refused(await w.admin.api.get(foreign)), expectRefusal(404, 'BCK.ORG.0005'));
  });

  test('a group’s wallets: any group for an Admin, their own active group for a Member', async (t) => {
    const s = stack();
    const w = await world(s);
    const path = (groupId: string) => `/organizations/${w.orgId}/groups/${groupId}/wallets`;
    const listed = (await w.admin.api.get(`/organizations/${w.orgId}/wallets`)).body.wallets;
    t.deepEqual((await w.admin.api.get(path(w.groupId))).body, { success: true, wallets: [listed[0]] });
    t.deepEqual((await w.admin.api.get(path(w.otherGroupId))).body, { success: true, wallets: [] });
    t.deepEqual((await w.inGroup.api.get(path(w.groupId))).body, { success: true, wallets: [listed[0]] });
    t.deepEqual(refused(await w.notIn.api.get(path(w.groupId))), expectRefusal(404, 'BCK.ORG.0003'));
    t.deepEqual((await w.notIn.api.get(path(w.otherGroupId))).body, { success: true, wallets: [] });
    t.deepEqual(refused(await w.outsider.api.get(path(w.groupId))), expectRefusal(404, 'BCK.ORG.0001'));
    t.deepEqual(refused(await w.otherAdmin.api.get(path(w.groupId))), expectRefusal(404, 'BCK.ORG.0001'));
    for (const g of [w.foreignGroupId, NO_ID, 'nope']) {
      t.deepEqual(refused(await w.admin.api.get(path(g))), expectRefusal(404, 'BCK.ORG.0003'), g);
    }
    // An Admin still reads a deactivated group's shares (its history); its Member no longer does.
    await deactivate(s, w.groupId);
    t.deepEqual((await w.admin.api.get(path(w.groupId))).body, { success: true, wallets: [listed[0]] });
    t.deepEqual(refused(await w.inGroup.api.get(path(w.groupId))), expectRefusal(404, 'BCK.ORG.0003'));
  });

  test('concurrent shares and unshares of one pair, through two admin processes, leave the row and the log consistent', async (t) => {
    const s = stack();
    const w = await world(s);
    // A second admin process on the same database: on SQLite the writers are then other processes, whose
    // transactions meet on the file lock (a read-to-write upgrade would fail with "database is locked").
    const second = await s.spawn('admin');
    try {
      const other = apiClient(`${second.url}/api/v1`, w.admin.api.apiKey);
      const path = `/organizations/${w.orgId}/wallets/${w.unsharedWalletId}/groups/${w.groupId}`;
      const answers = await Promise.all(
        Array.from({ length: 24 }, (_, i) => {
          const api = i % 4 < 2 ? w.admin.api : other;
          return i % 2 === 0 ? api.post(path) : api.del(path);
        }),
      );
      const shares = answers.filter((_, i) => i % 2 === 0);
      const unshares = answers.filter((_, i) => i % 2 === 1);
      for (const r of shares) t.true([200, 409].includes(r.status), `share ${r.status} ${r.text}`);
      for (const r of unshares) t.true([200, 404].includes(r.status), `unshare ${r.status} ${r.text}`);
      const shared = shares.filter((r) => r.status === 200).length;
      const unshared = unshares.filter((r) => r.status === 200).length;
      t.true(shared >= 1, 'the first share of an unshared pair succeeds');
      const rows = await s.ctx.db.em().count(OrgWalletShare, { walletId: w.unsharedWalletId, groupId: w.groupId });
      t.is(shared - unshared, rows, 'every answered change happened, and only those');
      t.true(rows === 0 || rows === 1);
      t.is((await activity(s, w.orgId, 'wallet.shared')).length, shared);
      t.is((await activity(s, w.orgId, 'wallet.unshared')).length, unshared);
      // And the pair still works afterwards.
      const after = rows === 1 ? await w.admin.api.del(path) : await w.admin.api.post(path);
      t.is(after.status, 200);
    } finally {
      await second.stop();
    }
  });

  test('enrolling a card: 201, the row and payment_method.enrolled; Admin only', async (t) => {
    const s = stack();
    const w = await world(s);
    const path = `/organizations/${w.orgId}/payment-methods`;
    const body = card({ brand: 'amex', last4: '0005', expMonth: 1 });
    const r = await w.admin.api.post(path, body);
    t.is(r.status, 201, r.text);
    t.deepEqual(Object.keys(r.body), ['success', 'paymentMethod']);
    const pm = r.body.paymentMethod;
    t.deepEqual(pm, { paymentMethodId: pm.paymentMethodId, ...body, createdAt: pm.createdAt });
    t.deepEqual(Object.keys(pm), ['paymentMethodId', 'brand', 'last4', 'expMonth', 'expYear', 'createdAt']);
    t.regex(pm.createdAt, ISO);
    const row = await s.ctx.db.em().findOneOrFail(OrgPaymentMethod, { id: pm.paymentMethodId });
    t.like(row, { orgId: w.orgId, brand: 'amex', last4: '0005', expMonth: 1, expYear: body.expYear });
    const enrolled = await activity(s, w.orgId, 'payment_method.enrolled');
    t.is(enrolled.length, 1);
    t.like(enrolled[0], { actorUserId: w.admin.userId, subjectType: 'payment_method', subjectId: pm.paymentMethodId });
    t.deepEqual(enrolled[0]?.details, { brand: 'amex', last4: '0005' });

    t.deepEqual(refused(await w.inGroup.api.post(path, card())), expectRefusal(403, 'BCK.ORG.0002'));
    t.deepEqual(refused(await w.notIn.api.post(path, card())), expectRefusal(403, 'BCK.ORG.0002'));
    t.deepEqual(refused(await w.outsider.api.post(path, card())), expectRefusal(404, 'BCK.ORG.0001'));
    t.deepEqual(refused(await w.otherAdmin.api.post(path, card())), expectRefusal(404, 'BCK.ORG.0001'));
    t.is(await s.ctx.db.em().count(OrgPaymentMethod, { orgId: w.orgId }), 1);
  });

  test('a bad card body is 400: brand, last4, month 1-12, an expired card by the service clock', async (t) => {
    const s = stack();
    const w = await world(s);
    const path = `/organizations/${w.orgId}/payment-methods`;
    const now = new Date();
    const year = now.getUTCFullYear();
    const month = now.getUTCMonth() + 1;
    const bad: unknown[] = [
      {},
      card({ brand: 'Visa' }),
      card({ brand: 'diners' }),
      card({ last4: '424' }),
      card({ last4: '42424' }),
      card({ last4: 4242 }),
      card({ last4: '42a2' }),
      card({ last4: '４２４２' }),
      card({ expMonth: 0 }),
      card({ expMonth: 13 }),
      card({ expMonth: 1.5 }),
      card({ expMonth: '12' }),
      card({ expYear: year - 1 }),
      card({ expYear: year + 21 }),
      card({ expYear: `${year + 1}` }),
      { ...card(), cvc: '123' },
      { ...card(), number: '4242424242424242' },
      [],
    ];
    // This year, last month: expired (not when the clock is in January).
    if (month > 1) bad.push(card({ expYear: year, expMonth: month - 1 }));
    for (const body of bad) {
      t.deepEqual(
        refused(await w.admin.api.post(path, body)),
        expectRefusal(400, 'BCK.HTTP.0400'),
        JSON.stringify(body),
      );
    }
    t.is(
      (await w.admin.api.post(path, card({ expYear: year, expMonth: month }))).status,
      201,
      'good through this month',
    );
    t.is((await w.admin.api.post(path, card({ expYear: year + 20 }))).status, 201);
    t.is(await s.ctx.db.em().count(OrgPaymentMethod, { orgId: w.orgId }), 2);
  });

  test(`the card body parser (${RUNS} HTTP runs): every body is 201 or 400, exactly as the schema says`, async (t) => {
    const s = stack();
    const w = await world(s);
    const path = `/organizations/${w.orgId}/payment-methods`;
    let created = 0;
    await fc.assert(
      fc.asyncProperty(cardBody(new Date().getUTCFullYear()), async (b) => {
        const r = await w.admin.api.post(path, b);
        // The service's clock and this one agree but for a month boundary crossed between the two readings.
        const verdict = enrollPaymentMethodBody(new Date()).safeParse(JSON.parse(JSON.stringify(b))).success;
        if (r.status === 201) created += 1;
        if (r.status !== (verdict ? 201 : 400)) throw new Error(`${JSON.stringify(b)} -> ${r.status} ${r.text}`);
      }),
      { numRuns: RUNS },
    );
    t.true(created > 0, 'some bodies were valid');
    t.is(await s.ctx.db.em().count(OrgPaymentMethod, { orgId: w.orgId }), created);
  });

  test('listing cards: Admins see all, a Member those shared with their active groups', async (t) => {
    const s = stack();
    const w = await world(s);
    const path = `/organizations/${w.orgId}/payment-methods`;
    const a = (await w.admin.api.post(path, card({ last4: '1111' }))).body.paymentMethod;
    const b = (await w.admin.api.post(path, card({ brand: 'discover', last4: '2222' }))).body.paymentMethod;
    const share = await w.admin.api.post(`/organizations/${w.orgId}/groups/${w.groupId}/payment-methods`, {
      paymentMethodId: b.paymentMethodId,
    });
    t.is(share.status, 200, share.text);
    t.deepEqual((await w.admin.api.get(path)).body, { success: true, paymentMethods: [a, b] });
    t.deepEqual((await w.inGroup.api.get(path)).body, { success: true, paymentMethods: [b] });
    t.deepEqual((await w.notIn.api.get(path)).body, { success: true, paymentMethods: [] });
    t.deepEqual(refused(await w.outsider.api.get(path)), expectRefusal(404, 'BCK.ORG.0001'));
    t.deepEqual(refused(await w.otherAdmin.api.get(path)), expectRefusal(404, 'BCK.ORG.0001'));
  });

  test('sharing a card with a group: 200, the row and payment_method.shared; twice 409; every refusal', async (t) => {
    const s = stack();
    const w = await world(s);
    const pm = (await w.admin.api.post(`/organizations/${w.orgId}/payment-methods`, card())).body.paymentMethod;
    const path = (groupId: string) => `/organizations/${w.orgId}/groups/${groupId}/payment-methods`;
    const body = { paymentMethodId: pm.paymentMethodId };
    const r = await w.admin.api.post(path(w.groupId), body);
    t.is(r.status, 200, r.text);
    t.deepEqual(r.body, { success: true });
    const row = await s.ctx.db.em().findOneOrFail(OrgPaymentMethodShare, { paymentMethodId: pm.paymentMethodId });
    t.like(row, { groupId: w.groupId, orgId: w.orgId });
    const shared = await activity(s, w.orgId, 'payment_method.shared');
    t.is(shared.length, 1);
    t.like(shared[0], { actorUserId: w.admin.userId, subjectType: 'payment_method', subjectId: pm.paymentMethodId });
    t.deepEqual(shared[0]?.details, { groupId: w.groupId });

    t.deepEqual(refused(await w.admin.api.post(path(w.groupId), body)), expectRefusal(409, 'BCK.ORG.0008'));
    const inactive = await makeGroup(s, w.orgId);
    await deactivate(s, inactive);
    t.deepEqual(refused(await w.admin.api.post(path(inactive), body)), expectRefusal(409, 'BCK.ORG.0010'));
    t.deepEqual(refused(await w.inGroup.api.post(path(w.otherGroupId), body)), expectRefusal(403, 'BCK.ORG.0002'));
    t.deepEqual(refused(await w.notIn.api.post(path(w.otherGroupId), body)), expectRefusal(403, 'BCK.ORG.0002'));
    t.deepEqual(refused(await w.outsider.api.post(path(w.otherGroupId), body)), expectRefusal(404, 'BCK.ORG.0001'));
    t.deepEqual(refused(await w.otherAdmin.api.post(path(w.otherGroupId), body)), {
      status: 404,
      code: 'BCK.ORG.0001',
    });
    for (const [groupId, paymentMethodId, code] of [
      [w.otherGroupId, w.foreignCardId, 'BCK.ORG.0007'],
      [w.otherGroupId, NO_ID, 'BCK.ORG.0007'],
      [w.otherGroupId, 'pm_card_visa', 'BCK.ORG.0007'],
      [w.foreignGroupId, pm.paymentMethodId, 'BCK.ORG.0003'],
      ['nope', pm.paymentMethodId, 'BCK.ORG.0003'],
    ] as const) {
      t.deepEqual(refused(await w.admin.api.post(path(groupId), { paymentMethodId })), expectRefusal(404, code));
    }
    for (const bad of [{}, { paymentMethodId: 5 }, { paymentMethodId: 'a\u0000' }, { ...body, extra: 1 }, []]) {
      t.deepEqual(refused(await w.admin.api.post(path(w.otherGroupId), bad)), expectRefusal(400, 'BCK.HTTP.0400'));
    }
    t.is(await s.ctx.db.em().count(OrgPaymentMethodShare, { orgId: w.orgId }), 1);
    t.is((await activity(s, w.orgId, 'payment_method.shared')).length, 1);
  });
});
