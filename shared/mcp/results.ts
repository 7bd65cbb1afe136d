// What a tool call answers (MCP 2025-11-25 "Tools", tool results): the structured result and the same JSON as
// text, for hosts that show only text. A refusal is a result with `isError: true` (the model reads it and may try
// again differently), never a JSON-RPC error: those are for the protocol itself (an unknown tool, a malformed
// message). The refusal carries the code the HTTP route would have answered, so a refusal means one thing at every
// door.
import { type AppError, asAppError } from '../errors/app-error.js';
import { catalogue } from '../errors/catalogue.js';

export interface ToolResult {
  [key: string]: unknown;
  content: { type: 'text'; text: string }[];
  structuredContent: Record<string, unknown>;
  isError?: true;
}

export const toolResult = (structured: Record<string, unknown>): ToolResult => ({
  content: [{ type: 'text', text: JSON.stringify(structured) }],
  structuredContent: structured,
});

/** The refusal's code, the catalogue's message and what the route would say in `details`. */
export function toolRefusal(err: AppError): ToolResult {
  const message = catalogue[err.code].message;
  const structured: Record<string, unknown> = { code: err.code, message };
  if (err.details !== message) structured.details = err.details;
  const paymentId = err.extra.paymentId;
  if (typeof paymentId === 'string') structured.paymentId = paymentId;
  return { ...toolResult(structured), isError: true };
}

/** Anything a tool throws, as a refusal: an unknown failure is BCK.HTTP.0500 and says no more than the route would. */
export const refusalOf = (err: unknown): ToolResult => toolRefusal(asAppError(err));
