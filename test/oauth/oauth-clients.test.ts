// OAuth clients: registered by the operator with the CLI (`oauth-clients create|list|update|disable`), and what
// `POST {host_url}/oauth/connect/details` tells the consent flow about one. On SQLite and PostgreSQL, through the
// real CLI process and the real proxy front door.
import test from 'ava';
import fc from 'fast-check';
import { OAuthClient } from '../../shared/db/entities/index.js';
import { createClient, disableClient } from '../../shared/oauth/clients.js';
import { redirectUriRefusal } from '../../shared/oauth/redirect-uri.js';
import { runCli } from '../support/cli.js';
import { forEachDb } from '../support/matrix.js';

const CHALLENGE = 'Bearer resource_metadata="http://payroute.test/.well-known/oauth-protected-resource"';

forEachDb(({ stack, test }) => {
  test('the CLI creates, lists, updates and disables a client; each prints one JSON object', async (t) => {
    const env = stack().env;
    const created = await runCli(
      [
        'oauth-clients',
        'create',
        '--name',
        '  Acme Agents  ',
        '--redirect-uri',
        'https://acme.example/cb',
        '--redirect-uri',
        'http://127.0.0.1:8765/callback',
        '--redirect-uri',
        'https://acme.example/cb',
        '--verified',
        '--account-level',
        '--consent-types',
        'account_access,commerce',
      ],
      env,
    );
    t.is(created.code, 0, created.stdout + created.stderr);
    const clientId = String(created.json.clientId);
    t.regex(clientId, /^[A-Za-z0-9_-]{22}$/);
    t.deepEqual(created.json, {
      clientId,
      name: 'Acme Agents',
      redirectUris: ['https://acme.example/cb', 'http://127.0.0.1:8765/callback'],
      verified: true,
      accountLevel: true,
      allowedConsentTypes: ['account_access', 'commerce'],
    });

    const updated = await runCli(
      ['oauth-clients', 'update', clientId, '--no-verified', '--consent-types', 'commerce'],
      env,
    );
    t.is(updated.code, 0, updated.stdout + updated.stderr);
    t.like(updated.json, { clientId, name: 'Acme Agents', verified: false, allowedConsentTypes: ['commerce'] });

    const disabled = await runCli(['oauth-clients', 'disable', clientId], env);
    t.is(disabled.code, 0, disabled.stdout);
    t.is(disabled.json.disabled, true);
    t.is(disabled.json.grantsRevoked, 0);

    const listed = await runCli(['oauth-clients', 'list'], env);
    t.is(listed.code, 0);
    const mine = (listed.json.clients as { clientId: string }[]).find((c) => c.clientId === clientId);
    t.deepEqual(mine, {
      clientId,
      name: 'Acme Agents',
      redirectUris: ['https://acme.example/cb', 'http://127.0.0.1:8765/callback'],
      verified: false,
      accountLevel: true,
      allowedConsentTypes: ['commerce'],
      disabled: true,
    });
    const row = await stack().ctx.db.em().findOneOrFail(OAuthClient, { clientId });
    t.truthy(row.disabledAt);
  });

  test('the CLI refuses bad registrations with one JSON error and a non-zero exit', async (t) => {
    const env = stack().env;
    for (const [args, code] of [
      [['oauth-clients', 'create', '--name', 'x', '--redirect-uri', 'http://acme.example/cb'], 'BCK.HTTP.0400'],
      [['oauth-clients', 'create', '--name', 'x'], 'BCK.HTTP.0400'],
      [['oauth-clients', 'create', '--redirect-uri', 'https://a.example/cb'], 'BCK.HTTP.0400'],
      [
        ['oauth-clients', 'create', '--name', 'x', '--redirect-uri', 'https://a.example/', '--consent-types', 'all'],
        'BCK.HTTP.0400',
      ],
      [['oauth-clients', 'disable', 'no-such-client'], 'BCK.OAUTH.0016'],
      [['oauth-clients', 'update', 'no-such-client', '--verified'], 'BCK.OAUTH.0016'],
    ] as const) {
      const r = await runCli([...args], env);
      t.is(r.code, 1, `${args.join(' ')}: ${r.stdout}`);
      t.is(r.json.error, code, args.join(' '));
    }
    // The client id is a word of its own: without it the command is a usage error.
    const missing = await runCli(['oauth-clients', 'disable'], env);
    t.is(missing.code, 2);
  });

  test('connect details: name, consent types, and account level only for a verified account-level client', async (t) => {
    const ctx = stack().ctx;
    const u = await stack().user();
    const details = (clientId: string, key: string | null = u.apiKey) =>
      fetch(`${stack().proxyUrl}/oauth/connect/details`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...(key === null ? {} : { authorization: `Bearer ${key}` }),
        },
        body: JSON.stringify({ client_id: clientId }),
      });
    const redirectUris = ['https://c.example/cb'];
    const full = await createClient(ctx, {
      name: 'Verified',
      redirectUris,
      verified: true,
      accountLevel: true,
      allowedConsentTypes: ['account_access', 'commerce'],
    });
    const unverified = await createClient(ctx, { name: 'Unverified', redirectUris, accountLevel: true });
    const none = await createClient(ctx, {
      name: 'Nothing to ask',
      redirectUris,
      verified: true,
      accountLevel: true,
      allowedConsentTypes: [],
    });
    const cases = [
      [
        full.clientId,
        { connectorName: 'Verified', accountLevelAllowed: true, allowedConsentTypes: ['account_access', 'commerce'] },
      ],
      [
        unverified.clientId,
        { connectorName: 'Unverified', accountLevelAllowed: false, allowedConsentTypes: ['commerce'] },
      ],
      [none.clientId, { connectorName: 'Nothing to ask', accountLevelAllowed: false, allowedConsentTypes: [] }],
    ] as const;
    for (const [clientId, want] of cases) {
      const r = await details(clientId);
      t.is(r.status, 200);
      t.deepEqual(await r.json(), want);
    }

    // Unknown or disabled: 400 BCK.OAUTH.0016.
    await disableClient(ctx, unverified.clientId);
    for (const clientId of ['no-such-client', unverified.clientId]) {
      const r = await details(clientId);
      t.is(r.status, 400);
      t.like(await r.json(), { code: 'BCK.OAUTH.0016', params: JSON.stringify({ clientId }) });
    }
    // No key or a bad key: 401 BCK.OAUTH.0007 with the Bearer challenge.
    for (const key of [null, 'sandbox:not-a-key']) {
      const r = await details(full.clientId, key);
      t.is(r.status, 401);
      t.is(((await r.json()) as { code: string }).code, 'BCK.OAUTH.0007');
      t.is(r.headers.get('www-authenticate'), CHALLENGE);
    }
    // A body that is not the contract's: 400 with the envelope.
    for (const body of ['{}', '{"client_id":""}', '{"client_id":"a\\u0000b"}', '[]', '{"client_id":7}']) {
      const r = await fetch(`${stack().proxyUrl}/oauth/connect/details`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${u.apiKey}` },
        body,
      });
      t.is(r.status, 400, body);
      t.is(((await r.json()) as { code: string }).code, 'BCK.HTTP.0400', body);
    }
  });
});

test('redirect URIs: https, http to loopback, private-use schemes; never a fragment, userinfo or other schemes', (t) => {
  for (const ok of [
    'https://acme.example/cb',
    'https://acme.example:8443/cb?x=1',
    'http://127.0.0.1:8765/callback',
    'http://[::1]/cb',
    'http://localhost:3000/cb',
    'com.acme.agent:/oauth2redirect',
  ]) {
    t.is(redirectUriRefusal(ok), undefined, ok);
  }
  for (const bad of [
    'http://acme.example/cb',
    'http://127.0.0.1.nip.io/cb',
    'https://acme.example/cb#frag',
    'https://user:pw@acme.example/cb',
    'javascript:alert(1)',
    'data:text/html,x',
    'file:///etc/passwd',
    '/relative/cb',
    'https://acme.example/c b',
    'https://acme.example/cb\u0000',
    '',
    `https://acme.example/${'a'.repeat(2000)}`,
  ]) {
    t.not(redirectUriRefusal(bad), undefined, bad);
  }
});

test('redirect URI parser: any string is accepted or refused with a reason, never thrown; what it accepts is absolute and fragment-free', (t) => {
  fc.assert(
    fc.property(
      fc.oneof(fc.string({ maxLength: 80 }), fc.webUrl({ withFragments: true, withQueryParameters: true })),
      (raw) => {
        const why = redirectUriRefusal(raw);
        if (why !== undefined) return typeof why === 'string';
        const url = new URL(raw);
        return url.hash === '' && url.username === '' && !raw.includes('#');
      },
    ),
    { numRuns: Number(process.env.FUZZ_RUNS ?? 2000) },
  );
  t.pass();
});
