// The MCP endpoint's door (POST/GET/DELETE {host_url}/mcp on the proxy): who may knock (only an OAuth access token
// issued for /mcp, RFC 8707; everything else 401 with /mcp's resource metadata in the challenge, RFC 9728 §5.1),
// the protocol versions it negotiates, and its sessions: opened by initialize, required after it, ended by DELETE,
// bound to their grant, and kept in the database, so another proxy process (or a restarted one) serves them.
import { decodeJwt } from 'jose';
import { McpSession } from '../../shared/db/entities/index.js';
import { sha256Hex } from '../../shared/crypto/hashing.js';
import { purgeMcpSessions } from '../../shared/mcp/sessions.js';
import { forEachDb } from '../support/matrix.js';
import { MCP_RESOURCE, initializeMessage, mcpClient, mcpGrant, rpc } from '../support/mcp.js';
import { ISSUER, codeGrant } from '../support/oauth.js';
import { PAID_ENV } from '../support/router-fixtures.js';

const CHALLENGE = `Bearer resource_metadata="${ISSUER}/.well-known/oauth-protected-resource/mcp"`;
const INVALID_TOKEN = `Bearer error="invalid_token", resource_metadata="${ISSUER}/.well-known/oauth-protected-resource/mcp"`;
const TOOLS = ['search_services', 'call_service', 'get_spending', 'list_payments'];
const listTools = (id = 2) => ({ jsonrpc: '2.0', id, method: 'tools/list', params: {} });

forEachDb(({ stack, test }) => {
  test('no token, on every method: 401 with the challenge naming /mcp resource metadata', async (t) => {
    const s = stack();
    for (const method of ['POST', 'GET', 'DELETE']) {
      const r = await fetch(`${s.proxyUrl}/mcp`, {
        method,
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        ...(method === 'POST' ? { body: JSON.stringify(initializeMessage()) } : {}),
      });
      t.is(r.status, 401, method);
      t.is(r.headers.get('www-authenticate'), CHALLENGE, method);
      t.is(((await r.json()) as { code: string }).code, 'BCK.AUTH.0001');
    }
    const malformed = await rpc(s.proxyUrl, 'not a token', initializeMessage());
    t.is(malformed.status, 401);
    t.is(malformed.headers.get('www-authenticate'), CHALLENGE);
  });

  test('an API key, and a token for the API, are refused at /mcp; a token for /mcp is refused on the API', async (t) => {
    const s = stack();
    const u = await s.user();
    const byKey = await rpc(s.proxyUrl, u.apiKey, initializeMessage());
    t.is(byKey.status, 401);
    t.is(byKey.headers.get('www-authenticate'), INVALID_TOKEN);

    const apiGrant = await codeGrant(s, u);
    t.is(decodeJwt(apiGrant.token).aud, `${ISSUER}/api/v1`);
    const apiToken = await rpc(s.proxyUrl, apiGrant.token, initializeMessage());
    t.is(apiToken.status, 401);
    t.is(apiToken.headers.get('www-authenticate'), INVALID_TOKEN);
    t.regex((apiToken.body as { details: string }).details, /not for http:\/\/payroute\.test\/mcp/);
    // The same token still works where it is for.
    t.is((await apiGrant.api.get('/router/payments')).status, 200);

    const g = await mcpGrant(s, u);
    t.is(decodeJwt(g.token).aud, MCP_RESOURCE);
    const onApi = await g.api.get('/router/payments');
    t.is(onApi.status, 401);
    t.is(onApi.body.code, 'BCK.AUTH.0001');
    t.regex(onApi.headers.get('www-authenticate') ?? '', /error="invalid_token"/);
    t.is((await rpc(s.proxyUrl, g.token, initializeMessage())).status, 200);
  });

  test('versions 2025-11-25 and 2025-06-18 are negotiated; an unknown one is answered with the latest', async (t) => {
    const s = stack();
    const g = await mcpGrant(s, await s.user());
    const cases: [string, string][] = [
      ['2025-11-25', '2025-11-25'],
      ['2025-06-18', '2025-06-18'],
      ['1999-01-01', '2025-11-25'],
    ];
    for (const [asked, answered] of cases) {
      const r = await rpc(s.proxyUrl, g.token, initializeMessage(asked));
      t.is(r.status, 200, JSON.stringify(r.body));
      const result = (
        r.body as { result: { protocolVersion: string; serverInfo: { name: string }; capabilities: object } }
      ).result;
      t.is(result.protocolVersion, answered);
      t.is(result.serverInfo.name, 'payroute');
      t.deepEqual(result.capabilities, { tools: {} });
      const id = r.headers.get('mcp-session-id') ?? '';
      t.regex(id, /^[A-Za-z0-9_-]{43}$/);
      const row = await s.ctx.db
        .em()
        .fork()
        .findOneOrFail(McpSession, { sessionHash: sha256Hex(id) });
      t.is(row.grantId, g.grantId);
      t.is(row.protocolVersion, answered);
      t.is(row.endedAt, null);
    }
    // A version header the transport does not know is refused.
    const init = await rpc(s.proxyUrl, g.token, initializeMessage());
    const sid = init.headers.get('mcp-session-id') ?? '';
    const bad = await rpc(s.proxyUrl, g.token, listTools(), {
      'mcp-session-id': sid,
      'mcp-protocol-version': '1999-01-01',
    });
    t.is(bad.status, 400);
  });

  test('sessions: required after initialize, bound to their grant, ended by DELETE', async (t) => {
    const s = stack();
    const u = await s.user();
    const g = await mcpGrant(s, u);
    const other = await mcpGrant(s, u);
    const init = await rpc(s.proxyUrl, g.token, initializeMessage());
    const sid = init.headers.get('mcp-session-id') ?? '';
    const withSession = { 'mcp-session-id': sid, 'mcp-protocol-version': '2025-11-25' };

    const none = await rpc(s.proxyUrl, g.token, listTools());
    t.is(none.status, 400);
    t.like(none.body, { jsonrpc: '2.0', error: { code: -32000 } });
    const unknown = await rpc(s.proxyUrl, g.token, listTools(), { ...withSession, 'mcp-session-id': 'x'.repeat(43) });
    t.is(unknown.status, 404);
    t.like(unknown.body, { error: { code: -32001 } });
    t.is((await rpc(s.proxyUrl, other.token, listTools(), withSession)).status, 404, "another grant's token");

    const listed = await rpc(s.proxyUrl, g.token, listTools(), withSession);
    t.is(listed.status, 200);
    t.deepEqual(
      (listed.body as { result: { tools: { name: string }[] } }).result.tools.map((x) => x.name),
      TOOLS,
    );

    const byOther = await fetch(`${s.proxyUrl}/mcp`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${other.token}`, ...withSession },
    });
    t.is(byOther.status, 404, 'another grant cannot end it');
    const ended = await fetch(`${s.proxyUrl}/mcp`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${g.token}`, ...withSession },
    });
    t.is(ended.status, 200);
    t.is((await rpc(s.proxyUrl, g.token, listTools(), withSession)).status, 404);
    const row = await s.ctx.db
      .em()
      .fork()
      .findOneOrFail(McpSession, { sessionHash: sha256Hex(sid) });
    t.truthy(row.endedAt);

    // The purge: a day after it ended, or after its grant was revoked, a session is deleted; a live one stays.
    const kept = await rpc(s.proxyUrl, other.token, initializeMessage());
    const keptHash = sha256Hex(kept.headers.get('mcp-session-id') ?? '');
    const third = await mcpGrant(s, u);
    const revokedInit = await rpc(s.proxyUrl, third.token, initializeMessage());
    const revokedHash = sha256Hex(revokedInit.headers.get('mcp-session-id') ?? '');
    const revoke = await fetch(`${s.proxyUrl}/oauth/bindings/${third.grantId}/revoke`, {
      method: 'POST',
      headers: { authorization: `Bearer ${u.apiKey}` },
    });
    t.is(revoke.status, 204);
    const listAfterRevoke = await rpc(s.proxyUrl, third.token, listTools(), {
      'mcp-session-id': revokedInit.headers.get('mcp-session-id') ?? '',
      'mcp-protocol-version': '2025-11-25',
    });
    t.is(listAfterRevoke.status, 401, 'a revoked grant stops its session at once');
    t.is(listAfterRevoke.headers.get('www-authenticate'), INVALID_TOKEN);
    t.is(await purgeMcpSessions(s.ctx, new Date()), 0, 'nothing is a day past');
    await purgeMcpSessions(s.ctx, new Date(Date.now() + 25 * 3_600_000));
    const left = await s.ctx.db
      .em()
      .fork()
      .find(McpSession, { sessionHash: { $in: [sha256Hex(sid), keptHash, revokedHash] } });
    t.deepEqual(
      left.map((r) => r.sessionHash),
      [keptHash],
    );
  });

  test('a session opened on one proxy process is served by another, and outlives the process that opened it', async (t) => {
    const s = stack();
    const g = await mcpGrant(s, await s.user());
    const other = await s.spawn('proxy');
    const init = await rpc(other.url, g.token, initializeMessage());
    t.is(init.status, 200);
    const headers = {
      'mcp-session-id': init.headers.get('mcp-session-id') ?? '',
      'mcp-protocol-version': '2025-11-25',
    };
    t.is((await rpc(s.proxyUrl, g.token, listTools(), headers)).status, 200);
    await other.stop();
    const restarted = await s.spawn('proxy');
    try {
      t.is((await rpc(restarted.url, g.token, listTools(), headers)).status, 200);
      t.is((await rpc(s.proxyUrl, g.token, listTools(3), headers)).status, 200);
    } finally {
      await restarted.stop();
    }
  });

  test('the SDK client initializes, lists the tools with their schemas, and ends its session', async (t) => {
    const s = stack();
    const g = await mcpGrant(s, await s.user());
    const c = await mcpClient(s.proxyUrl, g.token);
    try {
      t.is(c.transport.protocolVersion, '2025-11-25');
      t.truthy(c.transport.sessionId);
      t.is(c.client.getServerVersion()?.name, 'payroute');
      t.regex(c.client.getInstructions() ?? '', /search_services/);
      const { tools } = await c.client.listTools();
      t.deepEqual(
        tools.map((x) => x.name),
        TOOLS,
      );
      for (const tool of tools) {
        t.is(tool.inputSchema.type, 'object', tool.name);
        t.is(tool.outputSchema?.type, 'object', tool.name);
        t.false(JSON.stringify(tool).includes('$schema'), tool.name);
      }
      const call = tools.find((x) => x.name === 'call_service');
      t.deepEqual(Object.keys(call?.inputSchema.properties ?? {}).sort(), [
        'body',
        'headers',
        'method',
        'path',
        'protocol',
        'requestId',
        'slug',
        'url',
      ]);
      await c.transport.terminateSession();
      const row = await s.ctx.db.em().fork().findOneOrFail(McpSession, { grantId: g.grantId });
      t.truthy(row.endedAt);
    } finally {
      await c.close();
    }
  });

  test('GET opens the server-to-client stream of a session (text/event-stream), and needs the session', async (t) => {
    const s = stack();
    const g = await mcpGrant(s, await s.user());
    const init = await rpc(s.proxyUrl, g.token, initializeMessage());
    const headers = {
      authorization: `Bearer ${g.token}`,
      accept: 'text/event-stream',
      'mcp-session-id': init.headers.get('mcp-session-id') ?? '',
      'mcp-protocol-version': '2025-11-25',
    };
    const aborted = new AbortController();
    const stream = await fetch(`${s.proxyUrl}/mcp`, { headers, signal: aborted.signal });
    t.is(stream.status, 200);
    t.regex(stream.headers.get('content-type') ?? '', /^text\/event-stream/);
    aborted.abort();
    await stream.body?.cancel().catch(() => undefined);
    const noSession = await fetch(`${s.proxyUrl}/mcp`, {
      headers: { authorization: headers.authorization, accept: 'text/event-stream' },
    });
    t.is(noSession.status, 400);
    const notAccepting = await fetch(`${s.proxyUrl}/mcp`, { headers: { ...headers, accept: 'application/json' } });
    t.is(notAccepting.status, 406);
  });

  test('protocol errors are JSON-RPC errors: a body that is not JSON, an unknown tool, another HTTP method', async (t) => {
    const s = stack();
    const g = await mcpGrant(s, await s.user());
    const parse = await rpc(s.proxyUrl, g.token, '{"jsonrpc":');
    t.is(parse.status, 400);
    t.like(parse.body, { jsonrpc: '2.0', error: { code: -32700 }, id: null });
    const init = await rpc(s.proxyUrl, g.token, initializeMessage());
    const headers = {
      'mcp-session-id': init.headers.get('mcp-session-id') ?? '',
      'mcp-protocol-version': '2025-11-25',
    };
    const unknown = await rpc(
      s.proxyUrl,
      g.token,
      { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'transfer_everything', arguments: {} } },
      headers,
    );
    t.is(unknown.status, 200);
    t.like(unknown.body, { id: 7, error: { code: -32602 } });
    const put = await fetch(`${s.proxyUrl}/mcp`, { method: 'PUT', headers: { authorization: `Bearer ${g.token}` } });
    t.is(put.status, 405);
    t.is(put.headers.get('allow'), 'GET, POST, DELETE');
  });
}, PAID_ENV);
