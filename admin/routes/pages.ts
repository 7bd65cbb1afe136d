// The consent page (GET {WEB_APP_URL}/oauth/authorize, the discovery document's authorization_endpoint) and the
// device page (GET /device): server-rendered, no script. The human signs in with an API key; the page keeps a
// session (shared/oauth/page-session.ts). Every rule is the JSON endpoints' own: the pages call the same services
// (authorize.ts, device-decision.ts), so there is one implementation of what may be granted. The handlers are in
// admin/pages/, one file per page flow.
import { PUBLIC } from '../../shared/auth/route-callers.js';
import type { AdminDeps } from '../deps.js';
import { type AdminRoute, get, post, speaking } from '../http/route.js';
import { PAGE_PROTOCOL } from '../pages/browser.js';
import { showAuthorization, submitConsent } from '../pages/consent-page.js';
import { lookUpDevice, showDeviceEntry, submitDeviceDecision } from '../pages/device-page.js';
import { submitSignIn, submitSignOut } from '../pages/sign-in.js';

export function pageRoutes(deps: AdminDeps): AdminRoute[] {
  return [
    speaking(PAGE_PROTOCOL, get('/oauth/authorize', PUBLIC, showAuthorization(deps))),
    speaking(PAGE_PROTOCOL, post('/oauth/consent', PUBLIC, submitConsent(deps))),
    speaking(PAGE_PROTOCOL, post('/oauth/sign-in', PUBLIC, submitSignIn(deps))),
    speaking(PAGE_PROTOCOL, post('/oauth/sign-out', PUBLIC, submitSignOut(deps))),
    speaking(PAGE_PROTOCOL, get('/device', PUBLIC, showDeviceEntry(deps))),
    speaking(PAGE_PROTOCOL, post('/device', PUBLIC, lookUpDevice(deps))),
    speaking(PAGE_PROTOCOL, post('/device/decision', PUBLIC, submitDeviceDecision(deps))),
  ];
}
