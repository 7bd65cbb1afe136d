// Property tests for the registry's parsers of untrusted input: whatever the body, parsing either
// succeeds with values that keep the invariants, or fails with the 400 envelope error; nothing else escapes.
import test from 'ava';
import fc from 'fast-check';
import { parse } from '../../admin/http/validate.js';
import { AppError } from '../../shared/errors/app-error.js';
import { MAX_INT64 } from '../../shared/money.js';
import {
  AgentInput,
  AgentUpdate,
  AgentWithPlanInput,
  LIMITS,
  PlanInput,
  PlanUpdate,
  isAgentId,
  planIdOf,
} from '../../shared/registry/requests.js';
import { agentBody, planBody, testAddress } from '../support/registry-builders.js';

const RUNS = Number(process.env.FUZZ_RUNS ?? 1000);

/** Either a valid value or anything at all, so runs mix near-valid bodies with garbage in each field. */
const orAnything = <T>(valid: fc.Arbitrary<T>): fc.Arbitrary<unknown> =>
  fc.oneof({ weight: 3, arbitrary: valid }, { weight: 1, arbitrary: fc.anything() });

const amount = fc.oneof(
  fc.bigInt({ min: -10n, max: MAX_INT64 + 10n }).map((b) => b.toString()),
  fc.integer({ min: -10, max: Number.MAX_SAFE_INTEGER }),
  fc.double(),
  fc.string(),
);
const address = fc.oneof(
  fc.integer({ min: 0, max: 2 ** 31 }).map(testAddress),
  fc.constant('0x036CbD53842c5426634e7929541eC2318f3dCF7e'),
  fc.constant('0x036CbD53842c5426634e7929541eC2318f3dCF7E'),
  fc.stringMatching(/^0x[0-9a-fA-F]{38,42}$/),
);
const priceConfig = fc.record({
  priceType: orAnything(fc.constant('FIXED_PRICE')),
  tokenAddress: orAnything(address),
  amounts: orAnything(fc.array(amount, { maxLength: 12 })),
  receivers: orAnything(fc.array(address, { maxLength: 12 })),
});
const creditsConfig = fc.record({
  creditsType: orAnything(fc.constant('FIXED')),
  amount: orAnything(amount),
  minAmount: orAnything(amount),
});
const url = fc.oneof(fc.webUrl(), fc.string(), fc.constant('https://a.example/x/:id'), fc.constant('ftp://x'));
const endpoint = fc.dictionary(
  fc.oneof(fc.constantFrom('GET', 'POST', 'PUT', 'PATCH', 'DELETE'), fc.string()),
  orAnything(url),
  {
    maxKeys: 3,
  },
);
const agentFields = {
  name: orAnything(fc.string({ maxLength: 210 })),
  description: orAnything(fc.string()),
  tags: orAnything(fc.array(fc.string({ maxLength: 110 }), { maxLength: 55 })),
  endpoints: orAnything(fc.array(endpoint, { maxLength: 4 })),
  agentDefinitionUrl: orAnything(url),
};

function accepts<T>(schema: Parameters<typeof parse>[0], value: unknown): T | undefined {
  try {
    return parse(schema, value) as T;
  } catch (err) {
    if (!(err instanceof AppError) || err.code !== 'BCK.HTTP.0400') throw err;
    return undefined;
  }
}

function checkPlanParts(p: { priceConfig?: any; creditsConfig?: any }): boolean {
  if (p.priceConfig !== undefined) {
    const { amounts, receivers } = p.priceConfig;
    if (amounts.length !== receivers.length || amounts.length < 1 || amounts.length > LIMITS.receivers) return false;
    if (!amounts.every((a: unknown) => typeof a === 'bigint' && a >= 0n && a <= MAX_INT64)) return false;
    if (amounts.reduce((x: bigint, y: bigint) => x + y, 0n) > MAX_INT64) return false;
  }
  if (p.creditsConfig !== undefined) {
    const { amount: a, minAmount: m } = p.creditsConfig;
    if (!(typeof a === 'bigint' && typeof m === 'bigint' && m > 0n && m <= a && a <= MAX_INT64)) return false;
  }
  return true;
}

test('plan bodies: parse or 400, and accepted plans keep the money invariants', (t) => {
  fc.assert(
    fc.property(
      fc.record(
        {
          name: orAnything(fc.string({ maxLength: 210 })),
          description: orAnything(fc.string()),
          priceConfig: orAnything(priceConfig),
          creditsConfig: orAnything(creditsConfig),
          accessLimit: orAnything(fc.constant('credits')),
        },
        { requiredKeys: [] },
      ),
      (body) => {
        const created = accepts<PlanInput>(PlanInput, body);
        if (created !== undefined && !checkPlanParts(created)) return false;
        const updated = accepts<PlanUpdate>(PlanUpdate, body);
        if (updated !== undefined && (Object.keys(updated).length === 0 || !checkPlanParts(updated))) return false;
        return true;
      },
    ),
    { numRuns: RUNS },
  );
  t.pass();
});

test('agent bodies: parse or 400, and accepted agents have bounded fields and http(s) URLs', (t) => {
  fc.assert(
    fc.property(fc.record(agentFields, { requiredKeys: [] }), (body) => {
      for (const schema of [AgentInput, AgentUpdate]) {
        const a = accepts<Partial<AgentInput>>(schema, body);
        if (a === undefined) continue;
        if (a.name !== undefined && (a.name.length < 1 || a.name.length > LIMITS.name)) return false;
        const urls = [
          ...(a.endpoints ?? []).flatMap((e) => Object.values(e)),
          ...(a.agentDefinitionUrl === undefined ? [] : [a.agentDefinitionUrl]),
        ];
        if (!urls.every((u) => /^https?:\/\//i.test(u) && u.length <= LIMITS.url)) return false;
        if (
          (a.endpoints ?? []).some((e) =>
            Object.keys(e).some((k) => !['GET', 'POST', 'PUT', 'PATCH', 'DELETE'].includes(k)),
          )
        )
          return false;
      }
      return true;
    }),
    { numRuns: RUNS },
  );
  t.pass();
});

test('combined bodies and whole-body garbage never escape as anything but a 400', (t) => {
  const valid = { agent: agentBody(), plan: planBody() };
  fc.assert(
    fc.property(
      fc.oneof(
        fc.anything(),
        fc.record({
          agentMetadata: orAnything(
            fc.record({ name: agentFields.name, description: agentFields.description, tags: agentFields.tags }),
          ),
          agentApi: orAnything(
            fc.record({ endpoints: agentFields.endpoints, agentDefinitionUrl: agentFields.agentDefinitionUrl }),
          ),
          planMetadata: orAnything(fc.constant({ name: valid.plan.name, description: valid.plan.description })),
          priceConfig: orAnything(priceConfig),
          creditsConfig: orAnything(creditsConfig),
          accessLimit: orAnything(fc.constant('credits')),
        }),
      ),
      (body) => {
        for (const schema of [AgentWithPlanInput, AgentInput, AgentUpdate, PlanInput, PlanUpdate])
          accepts(schema, body);
        const combined = accepts<AgentWithPlanInput>(AgentWithPlanInput, body);
        return combined === undefined || checkPlanParts(combined);
      },
    ),
    { numRuns: RUNS },
  );
  t.pass();
});

test('path ids: planIdOf accepts exactly the 32-bit non-negative decimals; isAgentId never throws', (t) => {
  fc.assert(
    fc.property(fc.oneof(fc.string(), fc.integer().map(String), fc.bigInt().map(String)), (s) => {
      const id = planIdOf(s);
      isAgentId(s);
      if (id === undefined) return !/^(0|[1-9][0-9]*)$/.test(s) || BigInt(s) > 2_147_483_647n;
      return String(id) === s && id <= 2_147_483_647;
    }),
    { numRuns: RUNS },
  );
  t.pass();
});
