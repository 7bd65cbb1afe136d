import { defineEntity, p } from '@mikro-orm/core';
import { Int64Type } from '../int64-type.js';

export const Agent = defineEntity({
  name: 'Agent',
  tableName: 'agent',
  indexes: [{ properties: ['ownerId', 'createdAt'] }],
  properties: {
    id: p.string().primary(),
    ownerId: p.string(),
    name: p.string(),
    description: p.text(),
    tags: p.json<string[]>(),
    endpoints: p.json<Record<string, string>[]>(),
    agentDefinitionUrl: p.text(),
    listed: p.boolean().default(true),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p
      .datetime()
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
  },
});

export const Plan = defineEntity({
  name: 'Plan',
  tableName: 'plan',
  indexes: [{ properties: ['ownerId', 'createdAt'] }],
  properties: {
    id: p.integer().primary().autoincrement(),
    ownerId: p.string(),
    name: p.string(),
    description: p.text(),
    priceType: p.string(),
    tokenAddress: p.string(),
    /** Decimal strings, one per receiver (atomic units of tokenAddress). */
    amounts: p.json<string[]>(),
    receivers: p.json<string[]>(),
    creditsType: p.string(),
    creditsAmount: p.type(Int64Type),
    creditsMinAmount: p.type(Int64Type),
    accessLimit: p.string(),
    listed: p.boolean().default(true),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p
      .datetime()
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
  },
});

export const AgentPlan = defineEntity({
  name: 'AgentPlan',
  tableName: 'agent_plan',
  properties: {
    agentId: p.string().primary(),
    planId: p.integer().primary().index(),
    createdAt: p.datetime().onCreate(() => new Date()),
  },
});
