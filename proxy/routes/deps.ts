import type { Authenticator } from '../../shared/accounts/api-keys.js';
import type { ServiceContext } from '../../shared/context.js';

/** What the router routes need; built once per proxy process. */
export interface RouterDeps {
  readonly ctx: ServiceContext;
  readonly auth: Authenticator;
}
