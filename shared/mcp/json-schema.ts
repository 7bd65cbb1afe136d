// Tool schemas as MCP hosts read them: JSON Schema draft-07 (the SDK client compiles output schemas with Ajv's
// draft-07 default, which refuses a 2020-12 `$schema`), made from the zod schemas that parse the same values, so
// what a host is told and what the server accepts cannot drift apart.
import { z } from 'zod';

export type JsonSchema = { [key: string]: unknown; type: 'object' };

/** `schema` as the host sees it: `io` input for arguments (a default makes a field optional), output for results. */
export function jsonSchemaOf(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
  const { $schema: _, ...rest } = z.toJSONSchema(schema, { target: 'draft-7', io, unrepresentable: 'any' });
  return { ...rest, type: 'object' };
}

/** A refusal, as every tool's results may be one (results.ts): its code and message, and what the route says. */
export const ToolRefusal = z.object({
  code: z.string().regex(/^BCK\./),
  message: z.string(),
  details: z.string().optional(),
  paymentId: z.string().optional(),
});

/**
 * A tool's output schema: its result, or a refusal. MCP requires an object schema at the root; the SDK client
 * checks every structuredContent against it, refusals included, so the refusal is one of the shapes it admits.
 */
export function outputSchemaOf(result: z.ZodType): JsonSchema {
  return {
    type: 'object',
    anyOf: [jsonSchemaOf(result, 'output'), jsonSchemaOf(ToolRefusal, 'output')],
  };
}
