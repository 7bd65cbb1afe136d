import type { CredentialResolver } from '../shared/auth/credential-resolver.js';
import type { ServiceContext } from '../shared/context.js';
import type { TokenSigner } from '../shared/keys/signing-keys.js';
import type { Lifecycle } from '../shared/lifecycle.js';

/** What the admin routes need: the service context plus the process-wide helpers built from it. */
export interface AdminDeps {
  readonly ctx: ServiceContext;
  readonly credentials: CredentialResolver;
  readonly signer: TokenSigner;
  /** The process's serving phase, for /readyz. */
  readonly lifecycle: Lifecycle;
}
