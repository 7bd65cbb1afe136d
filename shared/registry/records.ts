// The wire records of agents and plans. Other modules and clients depend on these exact field names: amounts
// and plan ids are decimal strings, dates ISO 8601, `isOwner` is relative to the caller.
import type { InferEntity } from '@mikro-orm/core';
import type { Agent, Plan } from '../db/entities/index.js';
import { toWire } from '../money.js';

export type AgentRow = Pick<
  InferEntity<typeof Agent>,
  | 'id'
  | 'ownerId'
  | 'name'
  | 'description'
  | 'tags'
  | 'endpoints'
  | 'agentDefinitionUrl'
  | 'listed'
  | 'createdAt'
  | 'updatedAt'
>;

export type PlanRow = Pick<
  InferEntity<typeof Plan>,
  | 'id'
  | 'ownerId'
  | 'name'
  | 'description'
  | 'priceType'
  | 'tokenAddress'
  | 'amounts'
  | 'receivers'
  | 'creditsType'
  | 'creditsAmount'
  | 'creditsMinAmount'
  | 'accessLimit'
  | 'listed'
  | 'createdAt'
  | 'updatedAt'
>;

export interface AgentRecord {
  agentId: string;
  name: string;
  description: string;
  tags: string[];
  endpoints: Record<string, string>[];
  agentDefinitionUrl: string;
  listed: boolean;
  isOwner: boolean;
  createdAt: string;
  updatedAt: string;
}

export interface PlanRecord {
  planId: string;
  name: string;
  description: string;
  priceConfig: { priceType: string; tokenAddress: string; amounts: string[]; receivers: string[] };
  creditsConfig: { creditsType: string; amount: string; minAmount: string };
  accessLimit: string;
  listed: boolean;
  isOwner: boolean;
  createdAt: string;
  updatedAt: string;
}

export function agentRecord(row: AgentRow, callerId: string): AgentRecord {
  return {
    agentId: row.id,
    name: row.name,
    description: row.description,
    tags: row.tags,
    endpoints: row.endpoints,
    agentDefinitionUrl: row.agentDefinitionUrl,
    listed: row.listed,
    isOwner: row.ownerId === callerId,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

export function planRecord(row: PlanRow, callerId: string): PlanRecord {
  return {
    planId: String(row.id),
    name: row.name,
    description: row.description,
    priceConfig: {
      priceType: row.priceType,
      tokenAddress: row.tokenAddress,
      amounts: row.amounts,
      receivers: row.receivers,
    },
    creditsConfig: {
      creditsType: row.creditsType,
      amount: toWire(row.creditsAmount),
      minAmount: toWire(row.creditsMinAmount),
    },
    accessLimit: row.accessLimit,
    listed: row.listed,
    isOwner: row.ownerId === callerId,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}
