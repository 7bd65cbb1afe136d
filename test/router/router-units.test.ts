import test from 'ava';
import { safePathSegments } from '../../shared/router/catalog.js';
import type { ApiKeyCaller } from '../../shared/auth/caller.js';
import { createRequestClaimStore } from '../../shared/router/request-claim-store.js';
import type { RouterServices } from '../../shared/router/services.js';
import { withClaim } from '../../shared/router/request-claims.js';
import { createConcurrencyLimiter } from '../../shared/router/concurrency.js';
import { computeFees, feeRecord } from '../../shared/router/fees.js';
import { bucketStart } from '../../shared/router/payments-summary.js';
import { paymentsCsv } from '../../shared/router/payments-csv.js';

test('fees follow the fee rule on several prices', (t) => {
  // 0.01 USDC at 500 bps: fee 500 atomic; cap charge ceil(10,500 / 10,000) = 2 cents.
  t.deepEqual(feeRecord(computeFees(10_000n, 500, true), true), {
    bps: 500,
    amount: '500',
    cents: '1',
    capChargedCents: '2',
    capChargedMicros: '10500',
  });
  // 1 USDC: fee 0.05; 100 + 5 cents.
  t.deepEqual(feeRecord(computeFees(1_000_000n, 500, true), true), {
    bps: 500,
    amount: '50000',
    cents: '5',
    capChargedCents: '105',
    capChargedMicros: '1050000',
  });
  // A fee that floors to 0 is dropped (19 x 500 / 10,000 = 0.95 -> 0): no fee leg, bps reported 0.
  const tiny = computeFees(19n, 500, true);
  t.is(tiny.feeAmount, 0n);
  t.deepEqual(feeRecord(tiny, false), { bps: 0, amount: '0', cents: '0', capChargedCents: '1' });
  t.is(tiny.approxCents, 1n);
  // A price that is not a whole cent: 12,345 atomic = 1.2345 cents -> approx 2; +617 fee = 12,962 -> 2 cents.
  const odd = computeFees(12_345n, 500, true);
  t.is(odd.feeAmount, 617n);
  t.is(odd.approxCents, 2n);
  t.is(odd.capChargedCents, 2n);
  t.is(odd.feeCents, 0n);
  // MPP / mode A without requestId: no fee.
  t.deepEqual(feeRecord(computeFees(1_000_000n, 500, false), true), {
    bps: 0,
    amount: '0',
    cents: '0',
    capChargedCents: '100',
    capChargedMicros: '1000000',
  });
});

test('slug paths: only plain segments', (t) => {
  t.deepEqual(safePathSegments('/v1/forecast'), ['v1', 'forecast']);
  t.deepEqual(safePathSegments('v1/items/42/'), ['v1', 'items', '42', '']);
  t.deepEqual(safePathSegments(''), []);
  t.deepEqual(
    safePathSegments('v1/items;page=2/...'),
    ['v1', 'items;page=2', '...'],
    'parameters and other dots are plain',
  );
  for (const bad of [
    '//evil.com',
    'a//b',
    '../secret',
    'a/../../b',
    'a/./b',
    '@evil.com',
    'a@b',
    'a\\b',
    '%2e%2e/x',
    '%2E%2E',
    'a%2fb',
    '%5c',
    '%40evil',
    'http://evil.com',
    'https:/x',
    'javascript:alert(1)',
    'a\nb',
    'a b',
    '%00',
    // Dot segments with path parameters: `..` to Tomcat and Spring.
    '..;/admin',
    'v1/..;/admin',
    '.;/x',
    'a/.;',
    '..;x/y',
    '..%3B/admin',
    'a%3bb',
  ]) {
    t.is(safePathSegments(bad), undefined, bad);
  }
});

test('UTC buckets: day, ISO week (Monday), month', (t) => {
  const d = new Date('2026-11-21T23:59:59.999Z'); // a Saturday
  t.is(bucketStart(d, 'day'), '2026-11-21');
  t.is(bucketStart(d, 'week'), '2026-11-16');
  t.is(bucketStart(new Date('2026-11-16T00:00:00Z'), 'week'), '2026-11-16');
  t.is(bucketStart(new Date('2026-11-22T12:00:00Z'), 'week'), '2026-11-16');
  t.is(bucketStart(d, 'month'), '2026-11-01');
});

test('CSV escapes quotes, commas and formula cells', (t) => {
  const csv = paymentsCsv([
    {
      paymentId: 'p1',
      protocol: 'x402',
      status: 'Settled',
      delegationId: 'd',
      clientId: '+client',
      grantId: null,
      requestId: '=cmd()',
      txHash: null,
      resourceUrl: 'http://x/a,b"c',
      createdAt: '2026-01-01T00:00:00.000Z',
      x402Version: 2,
      settlement: {
        recipient: '0x1',
        amount: '10',
        network: 'eip155:84532',
        approxCents: '1',
        asset: '0x2',
        scheme: 'exact',
      },
      fee: { bps: 500, amount: '0', cents: '0', capChargedCents: '1', capChargedMicros: '10' },
    },
  ]);
  const [header, row] = csv.split('\r\n');
  t.true(header?.startsWith('paymentId,createdAt,status'));
  t.true(row?.includes(",'+client,'=cmd(),"));
  t.true(row?.endsWith('"http://x/a,b""c"'));
});

test('in-process claims and the per-user limiter', async (t) => {
  const claims = createRequestClaimStore();
  t.is(claims.tryClaim('u', 'r1').type, 'claimed');
  const dup = claims.tryClaim('u', 'r1');
  t.is(dup.type, 'held');
  t.is(claims.tryClaim('v', 'r1').type, 'claimed');
  claims.assign('u', 'r1', 'pay-1');
  if (dup.type === 'held') t.is(await dup.paymentId, 'pay-1');
  const later = claims.tryClaim('u', 'r1');
  if (later.type === 'held') t.is(await later.paymentId, 'pay-1');
  else t.fail('a claimed requestId must stay held');
  const refused = claims.tryClaim('w', 'r2');
  t.is(refused.type, 'claimed');
  const waiting = claims.tryClaim('w', 'r2');
  claims.release('w', 'r2');
  if (waiting.type === 'held') t.is(await waiting.paymentId, undefined);
  t.is(claims.tryClaim('w', 'r2').type, 'claimed');
  // A refusal frees the requestId for a retry; assign keeps it.
  t.is(claims.tryClaim('x', 'r3').type, 'claimed');
  const early = claims.tryClaim('x', 'r3');
  claims.release('x', 'r3');
  if (early.type === 'held') t.is(await early.paymentId, undefined);
  else t.fail('a claimed requestId must be held');
  t.is(claims.tryClaim('x', 'r3').type, 'claimed', 'refused: the requestId may be retried');
  claims.assign('x', 'r3', 'pay-4');
  const spent = claims.tryClaim('x', 'r3');
  if (spent.type === 'held') t.is(await spent.paymentId, 'pay-4');
  else t.fail('a spent requestId stays held');
  const limiter = createConcurrencyLimiter(2);
  const a = limiter.acquire('u');
  const b = limiter.acquire('u');
  t.truthy(a);
  t.truthy(b);
  t.is(limiter.acquire('u'), undefined);
  t.truthy(limiter.acquire('other'));
  a?.();
  a?.(); // releasing twice frees one slot only
  t.truthy(limiter.acquire('u'));
  t.is(limiter.acquire('u'), undefined);
});

test('withClaim: a claim given back early (a free stream) is not released again when its request ends', async (t) => {
  // The streaming proxy gives a free call's requestId back before the answer has streamed. A new request may take
  // the requestId meanwhile; the first request's end must not release that new claim.
  const claims = createRequestClaimStore();
  const services = {
    requestClaims: claims,
    ctx: { config: { ROUTER_CONNECT_TIMEOUT_MS: 100, ROUTER_HEADERS_TIMEOUT_MS: 100 } },
  } as unknown as RouterServices;
  const principal = { userId: 'u1' } as ApiKeyCaller;
  let second: ReturnType<typeof claims.tryClaim> | undefined;
  await withClaim(services, principal, 'req-1', async (claim) => {
    claim.release();
    second = claims.tryClaim('u1', 'req-1'); // a new request with the same requestId, while the first streams
  });
  t.is(second?.type, 'claimed');
  const third = claims.tryClaim('u1', 'req-1');
  t.is(third.type, 'held', 'the second request still holds its claim after the first one ended');
});
