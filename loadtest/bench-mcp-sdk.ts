// What the MCP SDK's server costs per tools/call, apart from any tool: one HTTP server in this process answers a
// trivial tools/call four ways, 16 requests in flight for 4 s, and prints the process's CPU per call (client
// included, the same in each): `plain` writes the JSON-RPC answer by hand (the floor), `node` builds an SDK Server
// and a stateless StreamableHTTPServerTransport per request (what /mcp does), `web` the same with the Web-standard
// transport (no Node-to-Fetch conversion), `stateful` one SDK server and session transport reused for every call.
//   node --import tsx loadtest/bench-mcp-sdk.ts <plain|node|shared|web|stateful>
import { createServer } from 'node:http';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv-provider.js';
import { Pool } from 'undici';

const mode = process.argv[2] ?? 'node';
if (!['plain', 'node', 'shared', 'web', 'stateful'].includes(mode)) {
  throw new Error('mode: plain | node | shared | web | stateful');
}
// `shared`: as `node`, with one JSON Schema validator for every server (the SDK makes an Ajv instance per server
// unless given one).
const validator = new AjvJsonSchemaValidator();
function serverFor() {
  const server = new Server(
    { name: 'x', version: '1' },
    { capabilities: { tools: {} }, ...(mode === 'shared' ? { jsonSchemaValidator: validator } : {}) },
  );
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: [] }));
  server.setRequestHandler(CallToolRequestSchema, async () => ({
    content: [{ type: 'text', text: '{}' }],
    structuredContent: { ok: true },
  }));
  return server;
}
const stateful = new StreamableHTTPServerTransport({ enableJsonResponse: true, sessionIdGenerator: () => 'sess-1' });
const statefulServer = serverFor();
const statefulReady = statefulServer.connect(stateful);
const http = createServer(async (req, res) => {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const body = JSON.parse(Buffer.concat(chunks).toString()) as { id: number };
  if (mode === 'plain') {
    const out = JSON.stringify({
      jsonrpc: '2.0',
      id: body.id,
      result: { content: [{ type: 'text', text: '{}' }], structuredContent: { ok: true } },
    });
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(out);
    return;
  }
  if (mode === 'stateful') {
    await statefulReady;
    await stateful.handleRequest(req, res, body);
    return;
  }
  const server = serverFor();
  if (mode === 'node' || mode === 'shared') {
    const t = new StreamableHTTPServerTransport({ enableJsonResponse: true });
    await server.connect(t);
    await t.handleRequest(req, res, body);
    return;
  }
  const t = new WebStandardStreamableHTTPServerTransport({ enableJsonResponse: true });
  await server.connect(t);
  const headers = new Headers();
  for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string') headers.set(k, v);
  const r = await t.handleRequest(new Request(`http://x${req.url}`, { method: 'POST', headers }), { parsedBody: body });
  const text = await r.text();
  const h: Record<string, string> = {};
  r.headers.forEach((v, k) => {
    h[k] = v;
  });
  res.writeHead(r.status, h);
  res.end(text);
});
await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
const port = (http.address() as { port: number }).port;
const pool = new Pool(`http://127.0.0.1:${port}`, { connections: 16 });
const one = async (i: number) => {
  const r = await pool.request({
    path: '/mcp',
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-11-25',
      'mcp-session-id': 'sess-1',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: i, method: 'tools/call', params: { name: 'x', arguments: {} } }),
  });
  const t = await r.body.text();
  if (r.statusCode !== 200) throw new Error(t);
};
if (mode === 'stateful') {
  const r = await pool.request({
    path: '/mcp',
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'a', version: '1' } },
    }),
  });
  await r.body.text();
}
for (let i = 0; i < 500; i++) await one(i);
const start = performance.now();
const cpu0 = process.cpuUsage();
let n = 0;
await Promise.all(
  Array.from({ length: 16 }, async () => {
    while (performance.now() - start < 4000) {
      await one(n++);
    }
  }),
);
const cpu = process.cpuUsage(cpu0);
console.log(mode, 'ops', n, 'µs CPU per op', ((cpu.user + cpu.system) / n).toFixed(0));
await pool.close();
http.close();
