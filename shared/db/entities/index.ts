import { ApiKey, ServiceWallet, SigningKey, User } from './accounts.js';
import { ChainBalance, ChainOrder, ChainReservation } from './chain.js';
import { Delegation, DelegationTransaction } from './delegations.js';
import { IdempotencyKey } from './idempotency.js';
import {
  McpSession,
  OAuthClient,
  OAuthCode,
  OAuthDeviceCode,
  OAuthDeviceRate,
  OAuthGrant,
  OAuthPageSession,
  OAuthRefreshToken,
  OAuthUserCodeAttempts,
} from './oauth.js';
import { AgentRequest, CreditBurn, CreditHolding, CreditLedger, CreditLot, PlanOrder } from './credits.js';
import { Agent, AgentPlan, Plan } from './registry.js';
import {
  GroupBudget,
  GroupBudgetTransaction,
  OrgActivity,
  OrgGroup,
  OrgGroupMember,
  OrgMembership,
  OrgPaymentMethod,
  OrgPaymentMethodShare,
  OrgWallet,
  OrgWalletShare,
  Organization,
} from './organizations.js';
import { CatalogEntry, RouterPayment } from './router.js';
import { SecretsKeyCheck } from './secrets.js';
import { TokenBalance, TokenLedger } from './token-ledger.js';
import { X402Permission, X402Settlement } from './x402.js';

export * from './accounts.js';
export * from './chain.js';
export * from './credits.js';
export * from './delegations.js';
export * from './idempotency.js';
export * from './oauth.js';
export * from './organizations.js';
export * from './registry.js';
export * from './router.js';
export * from './secrets.js';
export * from './token-ledger.js';
export * from './x402.js';

export const entities = [
  User,
  ApiKey,
  SigningKey,
  ServiceWallet,
  Agent,
  Plan,
  AgentPlan,
  CreditLot,
  CreditHolding,
  CreditLedger,
  AgentRequest,
  CreditBurn,
  PlanOrder,
  TokenBalance,
  TokenLedger,
  ChainBalance,
  ChainReservation,
  ChainOrder,
  Delegation,
  DelegationTransaction,
  X402Permission,
  X402Settlement,
  RouterPayment,
  CatalogEntry,
  IdempotencyKey,
  OAuthClient,
  OAuthGrant,
  OAuthCode,
  OAuthRefreshToken,
  OAuthDeviceCode,
  OAuthDeviceRate,
  OAuthUserCodeAttempts,
  OAuthPageSession,
  McpSession,
  Organization,
  OrgMembership,
  OrgGroup,
  OrgGroupMember,
  OrgWallet,
  OrgWalletShare,
  OrgPaymentMethod,
  OrgPaymentMethodShare,
  GroupBudget,
  GroupBudgetTransaction,
  OrgActivity,
  SecretsKeyCheck,
];
