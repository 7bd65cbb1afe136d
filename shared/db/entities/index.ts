import { ApiKey, ServiceWallet, SigningKey, User } from './accounts.js';
import { AgentRequest, CreditBurn, CreditLedger, CreditLot, PlanOrder } from './credits.js';
import { Agent, AgentPlan, Plan } from './registry.js';
import { TokenBalance, TokenLedger } from './token-ledger.js';

export * from './accounts.js';
export * from './credits.js';
export * from './registry.js';
export * from './token-ledger.js';

export const entities = [
  User,
  ApiKey,
  SigningKey,
  ServiceWallet,
  Agent,
  Plan,
  AgentPlan,
  CreditLot,
  CreditLedger,
  AgentRequest,
  CreditBurn,
  PlanOrder,
  TokenBalance,
  TokenLedger,
];
