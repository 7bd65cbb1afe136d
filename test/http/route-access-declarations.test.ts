// The route access declarations (shared/auth/route-callers.ts) are the one place that admits a caller: a public
// route reads no credential, an `accepts(...)` route resolves the credential and refuses any other kind with 403.
import test from 'ava';
import type { AccountAccessCaller, ApiKeyCaller, Caller, CommerceCaller } from '../../shared/auth/caller.js';
import type { CredentialResolver } from '../../shared/auth/credential-resolver.js';
import {
  API_KEY,
  API_KEY_OR_ACCOUNT_ACCESS,
  API_KEY_OR_COMMERCE,
  COMMERCE_ONLY,
  PUBLIC,
  type RouteCallers,
  accepts,
} from '../../shared/auth/route-callers.js';
import { AppError } from '../../shared/errors/app-error.js';

const apiKeyCaller: ApiKeyCaller = {
  kind: 'apiKey',
  userId: 'u1',
  apiKeyId: 'k1',
  email: 'u1@example.test',
  walletAddress: `0x${'11'.repeat(20)}`,
};

/** A resolver that answers `caller` for any header and counts its calls. */
function resolverOf(caller: Caller | AppError): CredentialResolver & { calls: number } {
  const r = {
    calls: 0,
    async resolve() {
      r.calls += 1;
      if (caller instanceof AppError) throw caller;
      return caller;
    },
  };
  return r;
}

test('a public route reads no credential and hands its handler no caller', async (t) => {
  const resolver = resolverOf(new AppError('BCK.AUTH.0001'));
  t.is(await PUBLIC.authorize(resolver, undefined), undefined);
  t.is(await PUBLIC.authorize(resolver, 'Bearer anything'), undefined);
  t.is(resolver.calls, 0);
  t.true(PUBLIC.public);
  t.deepEqual(PUBLIC.accepts, []);
});

test('an accepts() route admits the kinds it names and hands over the resolved caller', async (t) => {
  const resolver = resolverOf(apiKeyCaller);
  t.is(await API_KEY.authorize(resolver, 'Bearer sandbox:x'), apiKeyCaller);
  t.is(resolver.calls, 1);
  t.false(API_KEY.public);
  t.deepEqual(API_KEY.accepts, ['apiKey']);
});

test('the resolver refusal (401) passes through unchanged', async (t) => {
  const refusal = new AppError('BCK.AUTH.0001', { details: 'missing Authorization header' });
  const err = await t.throwsAsync(API_KEY.authorize(resolverOf(refusal), undefined));
  t.is(err, refusal);
});

const commerceCaller: CommerceCaller = {
  kind: 'commerce',
  userId: 'u1',
  walletAddress: apiKeyCaller.walletAddress,
  clientId: 'c1',
  grantId: 'g1',
  delegationId: 'd1',
};
const accountCaller: AccountAccessCaller = { ...commerceCaller, kind: 'account_access' };

async function refusal(access: RouteCallers<unknown>, caller: Caller) {
  return (await Promise.resolve(access.authorize(resolverOf(caller), 'Bearer x')).then(
    () => undefined,
    (err: unknown) => err,
  )) as AppError | undefined;
}

test('a key on a route for other kinds is 403 BCK.AUTH.0002, naming the kinds it accepts', async (t) => {
  const err = await refusal(accepts('commerce', 'account_access'), apiKeyCaller);
  t.true(err instanceof AppError);
  t.is(err?.code, 'BCK.AUTH.0002');
  t.is(err?.httpStatus, 403);
  t.deepEqual(err?.params, { kind: 'apiKey', accepts: ['commerce', 'account_access'] });
});

test('an OAuth token on a route that does not take its consent type is 403 BCK.OAUTH.0030', async (t) => {
  for (const [access, caller] of [
    [API_KEY, commerceCaller],
    [API_KEY, accountCaller],
    [API_KEY_OR_COMMERCE, accountCaller],
    [API_KEY_OR_ACCOUNT_ACCESS, commerceCaller],
  ] as const) {
    const err = await refusal(access, caller);
    t.is(err?.code, 'BCK.OAUTH.0030');
    t.is(err?.httpStatus, 403);
    t.deepEqual(err?.params, { consentType: caller.kind });
  }
  t.is(await API_KEY_OR_COMMERCE.authorize(resolverOf(commerceCaller), 'Bearer x'), commerceCaller);
  t.is(await API_KEY_OR_ACCOUNT_ACCESS.authorize(resolverOf(accountCaller), 'Bearer x'), accountCaller);
});

test('the commerce route takes a commerce token only: any other credential is 403 BCK.OAUTH.0031', async (t) => {
  t.is(await COMMERCE_ONLY.authorize(resolverOf(commerceCaller), 'Bearer x'), commerceCaller);
  for (const caller of [apiKeyCaller, accountCaller]) {
    const err = await refusal(COMMERCE_ONLY, caller);
    t.is(err?.code, 'BCK.OAUTH.0031');
    t.is(err?.httpStatus, 403);
  }
  t.is(COMMERCE_ONLY.refusal, 'BCK.OAUTH.0031');
  t.deepEqual(COMMERCE_ONLY.accepts, ['commerce']);
});
