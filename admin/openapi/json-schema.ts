// zod -> JSON Schema draft 2020-12, the dialect of OpenAPI 3.1 (OAS 3.1 §4.8.24), through zod's own converter.
// Requests are described by what a client sends (`io: 'input'`: a `.default()` field is optional, a transform shows
// its input), responses by what the service writes (`io: 'output'`).
import { z } from 'zod';
import { components } from './responses/common.js';

export type JsonSchema = Record<string, unknown>;

/** The schema without the keywords that belong to a standalone document (`$schema`, `$id`). */
function embedded(schema: JsonSchema): JsonSchema {
  const { $schema: _dialect, $id: _id, ...rest } = schema;
  return rest;
}

/** What a client may send where `schema` parses. */
export function inputSchema(schema: z.ZodType): JsonSchema {
  return embedded(z.toJSONSchema(schema, { io: 'input' }) as JsonSchema);
}

/** Every named response schema, as `components.schemas`, referring to each other by `#/components/schemas/<id>`. */
export function componentSchemas(): Record<string, JsonSchema> {
  const { schemas } = z.toJSONSchema(components, {
    io: 'output',
    uri: (id) => `#/components/schemas/${id}`,
  });
  return Object.fromEntries(Object.entries(schemas).map(([id, s]) => [id, embedded(s as JsonSchema)]));
}

/** The component id of a named response schema, if it is one. */
export const componentId = (schema: z.ZodType): string | undefined => components.get(schema)?.id;
