// {host_url}/mcp: the MCP server (Streamable HTTP transport, MCP 2025-06-18 and 2025-11-25) through which any MCP
// host's agent searches the catalog and pays for calls within the budget its human approved. POST carries JSON-RPC
// messages, GET opens the server-to-client stream, DELETE ends a session.
//
// Each request gets its own SDK server and transport (the transport in its stateless mode), and the session is
// ours: a row the initialize answer names (shared/mcp/sessions.ts), checked on every later request. So nothing a
// call needs lives in one process's memory, any proxy process serves any session, and one that restarts loses none.
//
// The caller is an OAuth access token issued for {host_url}/mcp (RFC 8707) of a commerce grant; no token, or any
// other, is 401 with the challenge naming /mcp's resource metadata (RFC 9728 §5.1), which is how a host learns
// where to ask its human for consent. Origin is not checked (the transport specification asks it of servers a web
// page could reach with ambient credentials): every request carries a bearer token a page cannot have, so a
// rebound page reaches nothing.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv-provider.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  LATEST_PROTOCOL_VERSION,
  ListToolsRequestSchema,
  McpError,
  SUPPORTED_PROTOCOL_VERSIONS,
  isInitializeRequest,
} from '@modelcontextprotocol/sdk/types.js';
import type { CommerceCaller } from '../../shared/auth/caller.js';
import type { CredentialResolver } from '../../shared/auth/credential-resolver.js';
import { MCP_COMMERCE } from '../../shared/auth/route-callers.js';
import { AppError } from '../../shared/errors/app-error.js';
import type { Logger } from '../../shared/log.js';
import { invalidTokenChallenge } from '../../shared/oauth/metadata.js';
import { refusalOf, toolResult } from '../../shared/mcp/results.js';
import { type McpSessions, createMcpSessions } from '../../shared/mcp/sessions.js';
import { MCP_TOOLS, toolNamed } from '../../shared/mcp/tools.js';
import type { RouterServices } from '../../shared/router/services.js';
import { serviceVersion } from '../../shared/version.js';
import { readBody } from '../http/read-body.js';
import type { RequestFacts } from '../http/route-table.js';
import { sendJson, writeHead } from '../respond.js';

export const MCP_PATH = '/mcp';

const INSTRUCTIONS =
  'payroute pays for APIs within the budget the user approved for you. Find a service with search_services, call it ' +
  'with call_service (its HTTP 402 is paid for you), and see what is left with get_spending. A refusal names its ' +
  'code: BCK.ROUTER.0003 means the budget does not cover the call.';

export interface McpEndpoint {
  serve(req: IncomingMessage, res: ServerResponse, facts: RequestFacts): Promise<void>;
  /** Ends the open server-to-client streams (the process is stopping; hosts reconnect to another process). */
  close(): void;
}

/** A JSON-RPC error answered before any SDK server is involved (the transport's own shape for its refusals). */
function rpcError(res: ServerResponse, status: number, code: number, message: string): void {
  sendJson(res, status, { jsonrpc: '2.0', error: { code, message }, id: null });
}

/** The session header, when exactly one was sent. */
function sessionIdOf(req: IncomingMessage): string | undefined {
  const v = req.headers['mcp-session-id'];
  return typeof v === 'string' ? v : undefined;
}

/**
 * The JSON Schema validator every server of this process shares. The SDK's Server makes a new Ajv instance unless
 * given one, which was most of the cost of building a server per request (~110-170 µs of ~120-180); this server
 * never validates with it (it asks the host for nothing), and one instance serves any number of servers.
 */
const VALIDATOR = new AjvJsonSchemaValidator();

function serverFor(services: RouterServices, caller: CommerceCaller, log: Logger, facts: RequestFacts): Server {
  const server = new Server(
    { name: 'payroute', version: serviceVersion() },
    { capabilities: { tools: {} }, instructions: INSTRUCTIONS, jsonSchemaValidator: VALIDATOR },
  );
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: MCP_TOOLS.map((t) => ({
      name: t.name,
      title: t.title,
      description: t.description,
      inputSchema: t.inputSchema,
      outputSchema: t.outputSchema,
      annotations: t.annotations,
    })),
  }));
  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const tool = toolNamed(request.params.name);
    // An unknown tool is a protocol error (MCP "Tools", error handling), not a refusal the model should read.
    if (tool === undefined) throw new McpError(ErrorCode.InvalidParams, `unknown tool ${request.params.name}`);
    try {
      const result = await tool.call(services, caller, request.params.arguments);
      const payment = result.payment;
      if (typeof payment === 'object' && payment !== null && 'paymentId' in payment) {
        facts.paymentId = String(payment.paymentId);
      }
      return toolResult(result);
    } catch (err) {
      const refusal = refusalOf(err);
      if (refusal.structuredContent.code === 'BCK.HTTP.0500') log.error({ err, tool: tool.name }, 'MCP tool failed');
      const paymentId = refusal.structuredContent.paymentId;
      if (typeof paymentId === 'string') facts.paymentId = paymentId;
      return refusal;
    }
  });
  return server;
}

export function createMcpEndpoint(
  services: RouterServices,
  credentials: CredentialResolver,
  log: Logger,
  sessions: McpSessions = createMcpSessions(services.ctx),
): McpEndpoint {
  const config = services.ctx.config;
  const limits = { maxBytes: config.BODY_LIMIT_BYTES, timeoutMs: config.ROUTER_REQUEST_BODY_TIMEOUT_MS };
  const streams = new Set<ServerResponse>();

  /** Runs the request through a fresh SDK server and transport; resolves when the answer is written. */
  async function handle(
    req: IncomingMessage,
    res: ServerResponse,
    caller: CommerceCaller,
    facts: RequestFacts,
    body?: unknown,
  ) {
    const server = serverFor(services, caller, log, facts);
    // Stateless transport, JSON answers to POST (no stream is needed: no tool sends progress or asks the host).
    const transport = new StreamableHTTPServerTransport({ enableJsonResponse: true });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
  }

  /**
   * The request's session: 400 without one, 404 for one that is not (or no longer) the grant's (Streamable HTTP,
   * session management: the host starts a new session), and 401 once the grant is revoked (the host goes back to
   * its human), read from the database on every request, so a revocation stops the next call in every process.
   */
  async function sessionChecked(
    req: IncomingMessage,
    res: ServerResponse,
    caller: CommerceCaller,
  ): Promise<string | undefined> {
    const id = sessionIdOf(req);
    if (id === undefined) {
      rpcError(res, 400, -32000, 'Bad Request: Mcp-Session-Id header is required');
      return undefined;
    }
    const state = await sessions.stateOf(id, caller.grantId);
    if (state === 'revoked') {
      throw new AppError('BCK.AUTH.0001', {
        details: 'the grant of this access token was revoked',
        headers: {
          'www-authenticate': invalidTokenChallenge(config.publicUrl, 'mcp'),
        },
      });
    }
    if (state === 'unknown') {
      rpcError(res, 404, -32001, 'Session not found');
      return undefined;
    }
    return id;
  }

  return {
    async serve(req, res, facts) {
      const caller = await MCP_COMMERCE.authorize(credentials, req.headers.authorization);
      switch (req.method) {
        case 'POST': {
          let body: unknown;
          try {
            body = JSON.parse((await readBody(req, limits)).toString('utf8'));
          } catch (err) {
            if (err instanceof SyntaxError) return rpcError(res, 400, -32700, 'Parse error: the body is not JSON');
            throw err;
          }
          if (isInitializeRequest(body)) {
            const asked = body.params.protocolVersion;
            const version = SUPPORTED_PROTOCOL_VERSIONS.includes(asked) ? asked : LATEST_PROTOCOL_VERSION;
            res.setHeader('mcp-session-id', await sessions.open(caller.grantId, version));
            return handle(req, res, caller, facts, body);
          }
          if ((await sessionChecked(req, res, caller)) === undefined) return;
          return handle(req, res, caller, facts, body);
        }
        case 'GET': {
          if ((await sessionChecked(req, res, caller)) === undefined) return;
          streams.add(res);
          res.on('close', () => streams.delete(res));
          return handle(req, res, caller, facts);
        }
        case 'DELETE': {
          const id = await sessionChecked(req, res, caller);
          if (id === undefined) return;
          await sessions.end(id, caller.grantId);
          writeHead(res, 200, { 'content-length': 0 });
          res.end();
          return;
        }
        default:
          res.setHeader('allow', 'GET, POST, DELETE');
          return rpcError(res, 405, -32000, 'Method not allowed.');
      }
    },
    close() {
      for (const res of streams) res.end();
      streams.clear();
    },
  };
}
