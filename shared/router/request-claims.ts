import { type RouterPrincipal, requestScopeOf } from './principal.js';
import { AppError } from '../errors/app-error.js';
import type { RequestClaimStore } from './request-claim-store.js';
import type { RouterServices } from './services.js';
import { duplicateError } from './payment-duplicates.js';

/** Past the unpaid probe's own limits (connect + headers timeouts), beyond which no paymentId can still come. */
const WAIT_MARGIN_MS = 5_000;

/**
 * What a claimed request tells the claim store: that its payment was signed and recorded (spent), or that it
 * ends unpaid before the request does (a free stream gives its requestId back before the answer has streamed).
 */
export interface ClaimHandle {
  spent(paymentId: string): void;
  release(): void;
}

/** No requestId: nothing to tell. */
const UNCLAIMED: ClaimHandle = {
  spent() {},
  release() {},
};

/** The handle of a held claim. A class, not a literal of closures: one is made per router call. */
class HeldClaim implements ClaimHandle {
  assigned = false;
  released = false;
  constructor(
    private readonly claims: RequestClaimStore,
    private readonly owner: string,
    private readonly requestId: string,
  ) {}

  spent(paymentId: string): void {
    this.assigned = true;
    this.claims.assign(this.owner, this.requestId, paymentId);
  }

  /** Gives the requestId back, once. */
  release(): void {
    if (this.released) return;
    this.released = true;
    this.claims.release(this.owner, this.requestId);
  }
}

/** A duplicate's answer: 409 naming the first request's paymentId once it is known (or 409 in flight). */
async function waitForFirst(services: RouterServices, first: Promise<string | undefined>): Promise<never> {
  // A duplicate waits for the first request's paymentId, which exists once the first has probed the merchant
  // and inserted its payment row: at most as long as that probe may take (a busy merchant can take seconds).
  const c = services.ctx.config;
  const waitMs = c.ROUTER_CONNECT_TIMEOUT_MS + c.ROUTER_HEADERS_TIMEOUT_MS + WAIT_MARGIN_MS;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), waitMs).unref();
  });
  const paymentId = await Promise.race([first, timeout]);
  clearTimeout(timer);
  if (paymentId === undefined)
    throw new AppError('BCK.ROUTER.0002', { details: 'a request with this requestId is in flight' });
  throw duplicateError(paymentId);
}

/**
 * Runs `work` under the in-process claim of (user, requestId). A duplicate gets 409 BCK.ROUTER.0002 naming the
 * first request's paymentId; refusals before signing give the claim back. `beforeWait` runs when a duplicate
 * starts waiting for that paymentId: the caller's per-user slot is given back there, so duplicates a client
 * retries cannot hold its slots (and 429 its other calls) while the first request probes its merchant.
 */
export async function withClaim<T>(
  services: RouterServices,
  principal: RouterPrincipal,
  requestId: string | undefined,
  work: (claim: ClaimHandle) => Promise<T>,
  opts: { beforeWait?: () => void } = {},
): Promise<T> {
  if (requestId === undefined) return work(UNCLAIMED);
  // The requestId's claim scope (principal.ts): the user's keys share one, each grant has its own.
  const scope = requestScopeOf(principal);
  const owner = scope === '' ? principal.userId : `${principal.userId}\u0000${scope}`;
  const attempt = services.requestClaims.tryClaim(owner, requestId);
  if (attempt.type === 'held') {
    // The slot is given back only within the user's waiting budget (services.waiting); past it the duplicate waits
    // holding its slot, as every call does, so a flood of duplicates stays bounded by the two limits.
    const waitTurn = opts.beforeWait === undefined ? undefined : services.waiting.acquire(principal.userId);
    if (waitTurn !== undefined) opts.beforeWait?.();
    try {
      return await waitForFirst(services, attempt.paymentId);
    } finally {
      waitTurn?.();
    }
  }
  const claim = new HeldClaim(services.requestClaims, owner, requestId);
  try {
    const result = await work(claim);
    // Nothing was paid (a free call): the claim ends with the request.
    if (!claim.assigned) claim.release();
    return result;
  } catch (err) {
    const assigned = claim.assigned;
    // Another process won the durable claim: tell this process's waiting duplicates its paymentId too.
    if (
      err instanceof AppError &&
      err.code === 'BCK.ROUTER.0002' &&
      typeof err.params.paymentId === 'string' &&
      !assigned
    ) {
      services.requestClaims.assign(owner, requestId, err.params.paymentId);
      throw err;
    }
    // Spent once its payment committed (assigned): whatever fails after that (the paid hop), the requestId stays
    // taken and duplicates are told the paymentId. Refused before (no payment): give it back for a retry.
    if (!assigned && !(err instanceof AppError && err.code === 'BCK.ROUTER.0002')) claim.release();
    throw err;
  }
}
