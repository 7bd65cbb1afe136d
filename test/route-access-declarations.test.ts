// The route access declarations (shared/auth/route-access.ts) are the one place that admits a caller: a public
// route reads no credential, an `accepts(...)` route resolves the credential and refuses any other kind with 403.
import test from 'ava';
import type { ApiKeyCaller, Caller } from '../shared/auth/caller.js';
import type { CredentialResolver } from '../shared/auth/credential-resolver.js';
import { API_KEY, PUBLIC, accepts } from '../shared/auth/route-access.js';
import { AppError } from '../shared/errors/app-error.js';

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
  const refusal = new AppError('BCK.AUTH.0001', 'missing Authorization header');
  const err = await t.throwsAsync(API_KEY.authorize(resolverOf(refusal), undefined));
  t.is(err, refusal);
});

test('a caller of a kind the route does not accept is 403 BCK.AUTH.0002, naming the kinds it accepts', async (t) => {
  // Only API keys exist today, so no real caller can be of another kind; this one stands for the next kind (an
  // OAuth grant) to show the declaration, not each handler, refuses it.
  const other = { ...apiKeyCaller, kind: 'oauthGrant' } as unknown as Caller;
  const err = await t.throwsAsync(accepts('apiKey').authorize(resolverOf(other), 'Bearer x'), {
    instanceOf: AppError,
  });
  t.is(err?.code, 'BCK.AUTH.0002');
  t.is(err?.httpStatus, 403);
  t.deepEqual(err?.params, { kind: 'oauthGrant', accepts: ['apiKey'] });
});
