// The one error catalogue. Every code the service can put on the wire is listed here, with its HTTP status,
// category and whether a retry can help. Codes have the interface's form BCK.<AREA>.<4 digits>; framework-level
// errors use BCK.HTTP.<status as 4 digits>.

export type ErrorCategory = 'auth' | 'integration' | 'validation' | 'payment' | 'not_found' | 'conflict' | 'internal';

export interface CatalogueEntry {
  readonly httpStatus: number;
  readonly message: string;
  readonly category: ErrorCategory;
  readonly retryable: boolean;
  readonly hint: string;
}

const entry = (
  httpStatus: number,
  category: ErrorCategory,
  message: string,
  hint: string,
  retryable = false,
): CatalogueEntry => ({ httpStatus, category, message, hint, retryable });

export const catalogue = {
  // Framework level
  'BCK.HTTP.0400': entry(
    400,
    'validation',
    'Invalid request',
    'Check the request body and parameters against the API reference.',
  ),
  'BCK.HTTP.0404': entry(404, 'not_found', 'Route not found', 'Check the method and path.'),
  'BCK.HTTP.0405': entry(405, 'validation', 'Method not allowed', 'Check the method.'),
  // RFC 9110 §15.5.9: the request (its body) did not arrive in time; the server closes the connection.
  'BCK.HTTP.0408': entry(
    408,
    'validation',
    'Request timeout',
    'Send the whole request body without stalling; the connection was closed, so open a new one.',
    true,
  ),
  'BCK.HTTP.0413': entry(413, 'validation', 'Request body too large', 'Send a smaller body.'),
  // RFC 9110 §15.5.15: the request line (its target) is longer than the server reads.
  'BCK.HTTP.0414': entry(414, 'validation', 'Request target too long', 'Send a shorter URL; put data in the body.'),
  'BCK.HTTP.0415': entry(415, 'validation', 'Unsupported content type', 'Send Content-Type: application/json.'),
  // RFC 6585 §5: the header section is larger than the server reads.
  'BCK.HTTP.0431': entry(
    431,
    'validation',
    'Request header fields too large',
    'Send fewer or smaller headers (cookies are the usual cause).',
  ),
  'BCK.HTTP.0500': entry(
    500,
    'internal',
    'Internal server error',
    'Retry later; report the correlationId if it persists.',
    true,
  ),
  'BCK.HTTP.0502': entry(502, 'integration', 'Upstream service unavailable', 'Retry later.', true),
  'BCK.HTTP.0503': entry(503, 'internal', 'Service not ready', 'Retry later.', true),

  // The database did not answer in time, refused a connection, or is out of connections (errors/database-unavailable.ts).
  'BCK.DATABASE.0001': entry(
    503,
    'internal',
    'The database is unavailable',
    'Retry after the seconds in Retry-After. A payment or an order is never made twice: retry it with the same requestId (or Idempotency-Key), and a 409 names it if the first attempt was recorded after all.',
    true,
  ),

  // Authentication
  'BCK.AUTH.0001': entry(
    401,
    'auth',
    'Missing or invalid API key',
    'Send Authorization: Bearer <API key> with a key of this environment.',
  ),
  'BCK.AUTH.0002': entry(
    403,
    'auth',
    'This credential kind cannot call this route',
    'Call the route with a credential of a kind it accepts (the error params list them).',
  ),
  // GET /metrics on a process's own port is served only with METRICS_TOKEN (README "Metrics and logs").
  'BCK.AUTH.0003': entry(
    401,
    'auth',
    'Missing or invalid metrics token',
    'Send Authorization: Bearer <METRICS_TOKEN> (the token the operator configured for scraping).',
  ),

  // Registry and credits (protocol)
  'BCK.PROTOCOL.0003': entry(404, 'not_found', 'Plan not found', 'Check the planId.'),
  'BCK.PROTOCOL.0004': entry(404, 'not_found', 'Agent not found', 'Check the agentId.'),
  'BCK.PROTOCOL.0005': entry(404, 'not_found', 'Holder not found', 'The address is not an account known to this plan.'),
  'BCK.PROTOCOL.0010': entry(403, 'auth', 'Only the plan owner may do this', 'Use an API key of the plan owner.'),
  'BCK.PROTOCOL.0020': entry(
    400,
    'validation',
    'Endpoint does not match the agent',
    'Use one of the endpoints registered for the agent and verb.',
  ),
  'BCK.PROTOCOL.0021': entry(
    401,
    'auth',
    'Invalid access token',
    'Obtain a fresh token from /protocol/token/{planId}/{agentId}.',
  ),
  'BCK.PROTOCOL.0022': entry(
    400,
    'validation',
    'Invalid or mismatched proof',
    'Use the proof returned by initialize for this plan, holder and agent.',
  ),
  'BCK.PROTOCOL.0023': entry(
    409,
    'conflict',
    'Agent request already redeemed',
    'Each agentRequestId is redeemed once.',
  ),
  'BCK.PROTOCOL.0024': entry(404, 'not_found', 'Agent request not found', 'Call initialize first.'),
  'BCK.PROTOCOL.0025': entry(
    400,
    'validation',
    'Amount exceeds what the agent request may burn',
    'Burn at most maxCredits per agent request (redeem and sub-tasks together); initialize with a larger maxCredits.',
  ),
  'BCK.PROTOCOL.0062': entry(
    403,
    'integration',
    'The plan is unlisted and cannot be purchased',
    'Ask the plan owner to list the plan again.',
  ),
  'BCK.PROTOCOL.0040': entry(
    404,
    'not_found',
    'The plan is not attached to this agent',
    'Attach it with POST /protocol/agents/{agentId}/plan/{planId}.',
  ),
  'BCK.PAYMENT.0001': entry(
    402,
    'payment',
    'Payment failed: the buyer wallet balance is insufficient',
    'Fund the wallet (sandbox: npm run cli -- faucet) and retry.',
  ),
  'BCK.CREDITS.0003': entry(402, 'payment', 'Insufficient credits', 'Order the plan to obtain credits.'),

  // Delegations and the router
  'BCK.DELEGATION.0001': entry(
    404,
    'not_found',
    'Delegation not found',
    'Check the delegationId; only its owner sees a delegation.',
  ),
  'BCK.ROUTER.0001': entry(
    400,
    'validation',
    'Invalid router request or nothing fundable',
    'Check the request; the details name what cannot be paid (scheme, network, asset, recipient).',
  ),
  'BCK.ROUTER.0003': entry(
    402,
    'payment',
    'Delegation or group budget exceeded, expired, or inactive',
    'Create a new delegation or raise its cap; for a group budget (params.groupBudgetId), ask an Admin of the organization to raise its limit, or wait for its next period.',
  ),
  'BCK.ROUTER.0002': entry(
    409,
    'conflict',
    'Duplicate requestId',
    'A payment exists for this requestId; its paymentId is in the body. Use a new requestId for a new payment.',
  ),
  'BCK.ROUTER.0004': entry(
    404,
    'not_found',
    'Payment not found',
    'Check the paymentId; only its owner sees a payment.',
  ),
  'BCK.ROUTER.0005': entry(
    409,
    'conflict',
    'Payment is not in a state that allows this',
    'A payment is settled once, with one transaction hash.',
  ),
  'BCK.ROUTER.0007': entry(
    429,
    'integration',
    'Too many concurrent router calls',
    'Wait for calls in flight to finish, then retry.',
    true,
  ),
  'BCK.ROUTER.0009': entry(
    402,
    'payment',
    'Buyer wallet balance is insufficient',
    'Fund the wallet (sandbox: npm run cli -- faucet) and retry.',
  ),
  'BCK.ROUTER.0013': entry(
    409,
    'conflict',
    'Challenge already paid',
    'A payment exists for this MPP challenge, whose nonce it fixes (one authorization per challenge); its paymentId is in the body. Ask the merchant for a new challenge.',
  ),
  'BCK.ROUTER.0012': entry(
    400,
    'validation',
    'The EIP-712 domain of the asset does not match',
    'The merchant names a token with an EIP-712 name or version other than the known one; a signature under it would be rejected.',
  ),

  'BCK.ROUTER.0014': entry(
    409,
    'conflict',
    'The transaction is not on chain',
    'Check txHash: no mined transaction has it (a transaction still pending is not found either; report it once it is mined).',
  ),
  'BCK.ROUTER.0015': entry(
    409,
    'conflict',
    'The transaction reverted',
    'A reverted transaction moved nothing; report the transaction that settled the payment.',
  ),
  'BCK.ROUTER.0016': entry(
    409,
    'conflict',
    "The transaction did not use this payment's authorization",
    "Report the transaction whose AuthorizationUsed event names this payment's payer and nonce on the payment's token.",
  ),
  // Catalog
  'BCK.CATALOG.0001': entry(404, 'not_found', 'Service not found', 'Search the catalog: GET /api/v1/catalog/services.'),

  // The chain (SETTLEMENT_BACKEND=rpc)
  'BCK.CHAIN.0001': entry(
    503,
    'integration',
    'The chain could not be read',
    'The JSON-RPC endpoint (RPC_URL_<chainId>) did not answer in time or answered an error; nothing was paid or written. Retry.',
    true,
  ),
  'BCK.CHAIN.0003': entry(
    503,
    'integration',
    'The operator wallet cannot pay the gas',
    "Nothing was paid or credited. The operator funds the operator wallet (npm run cli -- wallets address) with the network's coin; then retry.",
    true,
  ),
  'BCK.CHAIN.0004': entry(
    409,
    'conflict',
    "The order's transfer was refused on chain",
    'The token refused the transfer (the details say why; e.g. the wallet holds less than the node saw a moment ago); nothing was credited.',
  ),

  // Idempotency-Key on money-moving POSTs (README "Idempotent requests"; Stripe's semantics)
  // OAuth (the numbering of the hosted service's connectors, kept so they work unchanged)
  'BCK.OAUTH.0007': entry(
    401,
    'auth',
    'Sign-in required',
    'These OAuth endpoints act for a signed-in human: send Authorization: Bearer <API key> of the user who consents.',
  ),
  'BCK.OAUTH.0016': entry(
    400,
    'validation',
    'Unknown OAuth client',
    'Check client_id: the client must be registered with this service and not disabled.',
  ),
  'BCK.OAUTH.0017': entry(
    400,
    'validation',
    'Redirect URI not registered',
    'redirect_uri must equal, character for character, one of the redirect URIs registered for the client.',
  ),
  'BCK.OAUTH.0018': entry(
    400,
    'validation',
    'Invalid authorization request',
    'Send a PKCE code_challenge (S256), a consent type the client may ask for, and a cap, currency and duration within the documented ranges.',
  ),
  'BCK.OAUTH.0019': entry(
    404,
    'not_found',
    'Binding not found',
    "Check bindingId: GET /oauth/bindings lists your bindings; another user's binding is not found.",
  ),
  'BCK.OAUTH.0020': entry(
    400,
    'validation',
    'Invalid or expired user code',
    'Check the code the device shows (8 letters, XXXX-XXXX); a code is valid for 10 minutes and can be used once.',
  ),
  'BCK.OAUTH.0021': entry(
    429,
    'validation',
    'Too many wrong user codes',
    'Wait for the number of seconds in Retry-After, then type the code the device shows again.',
    true,
  ),
  'BCK.OAUTH.0022': entry(
    403,
    'auth',
    'The form expired or did not come from this page',
    'Reload the page and submit its form again; forms are bound to the browser session that showed them.',
  ),
  'BCK.OAUTH.0025': entry(
    403,
    'auth',
    'Account-level access needs a verified account-level client',
    'Only a client the operator verified and allowed account-level access may ask for account_access; ask for commerce instead.',
  ),

  'BCK.OAUTH.0030': entry(
    403,
    'auth',
    'This route does not accept OAuth credentials',
    "An OAuth access token acts only within its grant's consent: call this route with the user's API key instead.",
  ),
  'BCK.OAUTH.0031': entry(
    403,
    'auth',
    'This route needs an OAuth commerce credential',
    "Call it with an access token of the user's commerce grant: ask the user for commerce consent (authorization code or device flow); an API key or an account_access token cannot pay through it.",
  ),
  'BCK.OAUTH.0040': entry(
    400,
    'validation',
    'Unknown resource',
    'resource (RFC 8707) must be, exactly and once, {host_url}/api/v1 (the default) or {host_url}/mcp.',
  ),

  // Organizations: another organization's objects are not found (404), never forbidden, so an id tells an
  // outsider nothing; a Member who tries to manage is 403.
  'BCK.ORG.0001': entry(
    404,
    'not_found',
    'Organization not found',
    'Check the orgId; an organization is visible only to its active members.',
  ),
  'BCK.ORG.0002': entry(
    403,
    'auth',
    'Only an Admin of the organization may do this',
    "Ask an Admin of the organization; Members read their organization, their groups and those groups' budgets and wallets.",
  ),
  'BCK.ORG.0003': entry(
    404,
    'not_found',
    'Group not found',
    'Check the groupId: it must be a group of this organization.',
  ),
  'BCK.ORG.0004': entry(
    404,
    'not_found',
    'Member not found',
    'Check the memberId (the membership id adding the member returned) or the user named: it must be an active member of this organization.',
  ),
  'BCK.ORG.0005': entry(
    404,
    'not_found',
    'Wallet not found',
    'Check the walletId: it must be a wallet of this organization.',
  ),
  'BCK.ORG.0006': entry(404, 'not_found', 'Budget not found', 'Check the budgetId: it must be a budget of this group.'),
  'BCK.ORG.0007': entry(
    404,
    'not_found',
    'Payment method not found',
    'Check the paymentMethodId: it must be a card enrolled in this organization.',
  ),
  'BCK.ORG.0008': entry(
    409,
    'conflict',
    'The organization already has this',
    'The member, group membership, share or budget exists already (a group has one budget per currency): read it, or change it with PATCH.',
  ),
  'BCK.ORG.0009': entry(
    409,
    'conflict',
    'An organization keeps at least one Admin',
    'Make another member an Admin first, then change or remove this one.',
  ),
  // Members and groups (0010-0019).
  'BCK.ORG.0010': entry(
    409,
    'conflict',
    'The group is inactive',
    'An inactive group keeps its members, shares and history but takes no new member and no new share of a wallet or card: reactivate it first (PATCH it with active: true).',
  ),
  // Wallet and card shares (0020-0029).
  'BCK.ORG.0020': entry(
    404,
    'not_found',
    'Share not found',
    'The wallet is not shared with this group: list its groups with GET /organizations/{orgId}/wallets/{walletId}/groups.',
  ),

  'BCK.IDEMPOTENCY.0001': entry(
    409,
    'conflict',
    'Idempotency key reused with a different request',
    'An Idempotency-Key names one request (method, path and body) for at least 24 hours: send the same request to get its answer again, or use a new key for a new request.',
  ),
  'BCK.IDEMPOTENCY.0002': entry(
    409,
    'conflict',
    'A request with this idempotency key is in progress',
    'The first request with this key has not finished: retry the same request shortly to get its answer.',
    true,
  ),

  // x402 delegated permissions
  'BCK.X402.0001': entry(
    404,
    'not_found',
    'Permission not found',
    'Check the permissionHash; only its owner sees a permission.',
  ),
  'BCK.X402.0002': entry(
    400,
    'validation',
    'The plan is not attached to this agent',
    'Attach the plan to the agent, or omit accepted.extra.agentId.',
  ),
  'BCK.X402.0003': entry(
    400,
    'validation',
    'The delegation cannot back this permission',
    'Use an active delegation of your own whose provider fits the scheme (erc4337 for svc:erc4337, a card provider for svc:card-delegation) and that is not restricted to another plan.',
  ),
} as const satisfies Record<string, CatalogueEntry>;

export type ErrorCode = keyof typeof catalogue;
