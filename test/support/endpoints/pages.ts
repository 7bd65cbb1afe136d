// Samples of the pages: public routes with their own session (a cookie) and CSRF tokens, which are opaque here (a
// hostile one is refused as forged, 403, not as malformed). A query field past the client and redirect URI is sent
// back to the connector (303), so those are opaque too.
import { AUTHORIZATION_FIELDS } from '../../../shared/oauth/authorize.js';
import { csrfTokenOf, newBrowserToken, signIn } from '../../../shared/oauth/page-session.js';
import type { EndpointCase, EndpointFixtures, FieldKind } from './index.js';
import { authorizeRequest, deviceRequest } from './oauth.js';

/** A signed-in page session of a fresh user: its cookie and the CSRF token bound to it. */
async function pageSession(f: EndpointFixtures): Promise<{ cookie: string; csrf: string }> {
  const token = await signIn(f.stack.ctx, (await f.stack.user()).userId);
  return { cookie: `payroute_page=${token}`, csrf: csrfTokenOf(token) };
}

const PAGE_KINDS: Readonly<Record<string, FieldKind>> = { 'headers.cookie': 'opaque', 'body.csrf': 'opaque' };

/** Every value as a string, as a query string or a form carries it. */
const stringsOf = (o: Record<string, unknown>): Record<string, string> =>
  Object.fromEntries(Object.entries(o).map(([k, v]) => [k, String(v)]));

export const PAGES_ENDPOINTS: Readonly<Record<string, EndpointCase>> = {
  'GET /oauth/authorize': {
    sample: async (f) => ({
      as: 'subscriber',
      query: { response_type: 'code', ...stringsOf(await authorizeRequest(f)) },
    }),
    kinds: Object.fromEntries(
      ['response_type', ...AUTHORIZATION_FIELDS.filter((k) => k !== 'client_id' && k !== 'redirect_uri')].map((k) => [
        `query.${k}`,
        'opaque' as const,
      ]),
    ),
  },
  'POST /oauth/consent': {
    sample: async (f) => {
      const { cookie, csrf } = await pageSession(f);
      const body = {
        ...stringsOf(await authorizeRequest(f)),
        csrf,
        decision: 'approve',
        cap: '5.00',
        duration: '3600',
      };
      return { as: 'subscriber', headers: { cookie }, body };
    },
    kinds: PAGE_KINDS,
    okStatus: 303,
  },
  'POST /oauth/sign-in': {
    sample: async (f) => {
      const token = newBrowserToken();
      const body = { csrf: csrfTokenOf(token), return_to: '/device', api_key: (await f.stack.user()).apiKey };
      return { as: 'subscriber', headers: { cookie: `payroute_page=${token}` }, body };
    },
    kinds: { ...PAGE_KINDS, 'body.api_key': 'opaque' },
    okStatus: 303,
  },
  'POST /oauth/sign-out': {
    sample: async (f) => {
      const { cookie, csrf } = await pageSession(f);
      return { as: 'subscriber', headers: { cookie }, body: { csrf, return_to: '/device' } };
    },
    kinds: PAGE_KINDS,
    okStatus: 303,
  },
  'GET /device': {
    sample: async () => ({ as: 'subscriber', query: { user_code: 'BCDF-GHJK' } }),
    kinds: { 'query.user_code': 'opaque' },
  },
  'POST /device': {
    sample: async (f) => {
      const { cookie, csrf } = await pageSession(f);
      return { as: 'subscriber', headers: { cookie }, body: { csrf, user_code: (await deviceRequest(f)).userCode } };
    },
    kinds: PAGE_KINDS,
  },
  'POST /device/decision': {
    sample: async (f) => {
      const { cookie, csrf } = await pageSession(f);
      const userCode = (await deviceRequest(f)).userCode;
      return {
        as: 'subscriber',
        headers: { cookie },
        body: { csrf, user_code: userCode, decision: 'approve', cap: '1.00', duration: '3600' },
      };
    },
    kinds: PAGE_KINDS,
  },
};
