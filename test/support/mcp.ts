// MCP test helpers: the official SDK client over Streamable HTTP to a proxy's /mcp, and a commerce grant whose
// tokens are for the MCP endpoint (RFC 8707 `resource`), obtained as a connector does (JSON authorize + code + PKCE).
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { type GrantToken, ISSUER, codeGrant } from './oauth.js';
import type { Stack } from './stack.js';

/** The MCP endpoint's resource identifier on a test stack (its PUBLIC_URL is the test issuer). */
export const MCP_RESOURCE = `${ISSUER}/mcp`;

/** A commerce grant of `user` whose tokens are for /mcp: `extra` are the authorize request's terms. */
export function mcpGrant(
  stack: Stack,
  user: { apiKey: string },
  extra: Record<string, unknown> = {},
): Promise<GrantToken> {
  return codeGrant(stack, user, { resource: MCP_RESOURCE, ...extra });
}

export interface Connected {
  readonly client: Client;
  readonly transport: StreamableHTTPClientTransport;
  close(): Promise<void>;
}

/** The SDK client connected (initialized) to `proxyUrl`/mcp with a bearer token. */
export async function mcpClient(proxyUrl: string, token: string): Promise<Connected> {
  const transport = new StreamableHTTPClientTransport(new URL(`${proxyUrl}/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${token}` } },
  });
  const client = new Client({ name: 'payroute-test', version: '1.0.0' });
  await client.connect(transport);
  return { client, transport, close: () => client.close() };
}

/** A tool's structured result (or refusal) and whether it was a refusal. */
export async function callTool(
  c: Connected,
  name: string,
  args: Record<string, unknown> = {},
): Promise<{ isError: boolean; structured: Record<string, unknown>; text: string }> {
  const r = await c.client.callTool({ name, arguments: args });
  const content = Array.isArray(r.content) ? r.content : [];
  const first = content[0] as { type?: string; text?: string } | undefined;
  return {
    isError: r.isError === true,
    structured: (r.structuredContent ?? {}) as Record<string, unknown>,
    text: first?.type === 'text' ? (first.text ?? '') : '',
  };
}

/** A raw JSON-RPC POST to /mcp (what the SDK client would not send), with its answer. */
export async function rpc(
  proxyUrl: string,
  token: string | undefined,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Headers; body: unknown }> {
  const r = await fetch(`${proxyUrl}/mcp`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
      ...headers,
    },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await r.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {}
  return { status: r.status, headers: r.headers, body: parsed };
}

export const initializeMessage = (protocolVersion = '2025-11-25', id = 1) => ({
  jsonrpc: '2.0',
  id,
  method: 'initialize',
  params: { protocolVersion, capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
});
