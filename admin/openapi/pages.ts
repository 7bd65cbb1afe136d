// The API description of the consent and device pages (admin/routes/pages.ts): HTML for a browser, with a session
// cookie and a CSRF token on every form; their errors are pages too. Listed so the reference is whole, not for
// programs to call.
import { z } from 'zod';
import { type Operations, html, seeOther } from './operation.js';
import { line } from '../../shared/text.js';
import { ConsentForm, DeviceDecisionForm, DeviceLookupForm, SignInForm, SignOutForm } from '../pages/forms.js';
import { AuthorizationRequest } from './oauth.js';

const FORM = "A form of the page: its fields and the CSRF token bound to the browser's `payroute_page` cookie.";

export const PAGE_OPERATIONS: Operations = {
  'GET /oauth/authorize': {
    summary: 'Consent page',
    description:
      "The `authorization_endpoint` of the discovery document. Until the client and the redirect URI are known good an error is a page; after that, errors go back to the connector's redirect URI (`error`, `error_description`, `state`, `iss`). A human not signed in gets the sign-in page.",
    tags: ['Pages'],
    request: { query: AuthorizationRequest.extend({ response_type: z.literal('code') }) },
    responses: {
      200: html('The consent page (or the sign-in page).'),
      303: seeOther('The request was refused: back to the connector with the error.'),
    },
    codes: ['BCK.HTTP.0400', 'BCK.OAUTH.0016', 'BCK.OAUTH.0017'],
  },
  'POST /oauth/consent': {
    summary: 'Consent page: decision',
    description: `${FORM} Carries the authorization request's fields back; the cap and the duration may be lowered, never raised.`,
    tags: ['Pages'],
    request: { body: ConsentForm.extend(AuthorizationRequest.shape) },
    responses: { 303: seeOther('Back to the connector, with the code or the denial.') },
    codes: ['BCK.HTTP.0400', 'BCK.OAUTH.0007', 'BCK.OAUTH.0016', 'BCK.OAUTH.0017', 'BCK.OAUTH.0018', 'BCK.OAUTH.0022'],
  },
  'POST /oauth/sign-in': {
    summary: 'Sign in to the pages',
    description: `${FORM} The human signs in with one of their API keys.`,
    tags: ['Pages'],
    request: { body: SignInForm },
    responses: {
      303: seeOther('Signed in: back to the page the human came from.'),
      401: html('The API key is not valid: the sign-in page again.'),
    },
    codes: ['BCK.HTTP.0400', 'BCK.OAUTH.0022'],
  },
  'POST /oauth/sign-out': {
    summary: 'Sign out of the pages',
    description: FORM,
    tags: ['Pages'],
    request: { body: SignOutForm },
    responses: { 303: seeOther('Signed out.') },
    codes: ['BCK.HTTP.0400', 'BCK.OAUTH.0022'],
  },
  'GET /device': {
    summary: 'Device page',
    description:
      'Where the human types the code a device shows (`verification_uri` of a device authorization). With `user_code` (`verification_uri_complete`), the sign-in page names the code and the entry form has it filled in; only `POST /device` looks a code up.',
    tags: ['Pages'],
    request: { query: z.object({ user_code: line(64).optional() }) },
    responses: { 200: html('The code entry page (or the sign-in page).') },
    codes: [],
  },
  'POST /device': {
    summary: 'Device page: look up a code',
    description: FORM,
    tags: ['Pages'],
    request: { body: DeviceLookupForm },
    responses: { 200: html("The consent page for the device's request, or the code entry page naming the error.") },
    codes: ['BCK.HTTP.0400', 'BCK.OAUTH.0007', 'BCK.OAUTH.0020', 'BCK.OAUTH.0021', 'BCK.OAUTH.0022'],
  },
  'POST /device/decision': {
    summary: 'Device page: decision',
    description: `${FORM} The cap and the duration may be lowered, never raised.`,
    tags: ['Pages'],
    request: { body: DeviceDecisionForm },
    responses: { 200: html('The decision is recorded.') },
    codes: ['BCK.HTTP.0400', 'BCK.OAUTH.0007', 'BCK.OAUTH.0020', 'BCK.OAUTH.0021', 'BCK.OAUTH.0022'],
  },
};
