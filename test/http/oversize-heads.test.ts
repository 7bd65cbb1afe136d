// A request whose head the HTTP parser refuses (a request line or header section over the size limit, chunk
// extensions over theirs, bytes that are not HTTP) is answered by both processes with the error envelope, not
// Node's bare status line: 414 BCK.HTTP.0414 for a request line alone too long (RFC 9110 §15.5.15), 431
// BCK.HTTP.0431 for the headers (RFC 6585 §5), 400 for the rest, each with `Connection: close`. A client that is
// still sending its oversize head reads that answer (lingering close), never a connection reset.
import { connect } from 'node:net';
import test, { type ExecutionContext } from 'ava';
import { type Stack, startStack } from '../support/stack.js';

/** Above Node's default header limit (16 KiB), which both processes keep. */
const OVER = 20 * 1024;
const GUARD_MS = 60_000;

interface Answer {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly text: string;
  /** The connection ended with a reset (the answer, if any, may have been lost). */
  readonly reset: boolean;
}

/**
 * Writes `head` on a fresh connection, then `more` in 16 KiB pieces while the socket takes them (a client still
 * sending), and collects what comes back until the server closes.
 */
function send(origin: string, head: string, more = 0, filler = 'a'): Promise<Answer> {
  const { hostname, port } = new URL(origin);
  return new Promise((resolve) => {
    const socket = connect(Number(port), hostname);
    const chunks: Buffer[] = [];
    let reset = false;
    const guard = setTimeout(() => socket.destroy(), GUARD_MS);
    socket.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'ECONNRESET') reset = true;
    });
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('close', () => {
      clearTimeout(guard);
      const raw = Buffer.concat(chunks).toString('utf8');
      const split = raw.indexOf('\r\n\r\n');
      const [statusLine = '', ...lines] = (split < 0 ? '' : raw.slice(0, split)).split('\r\n');
      const headers: Record<string, string> = {};
      for (const l of lines) headers[l.slice(0, l.indexOf(':')).toLowerCase()] = l.slice(l.indexOf(':') + 1).trim();
      resolve({ status: Number(statusLine.split(' ')[1] ?? '0') || 0, headers, text: raw.slice(split + 4), reset });
    });
    socket.on('connect', () => {
      socket.write(head);
      let left = more;
      const piece = Buffer.alloc(16 * 1024, filler);
      const pump = () => {
        while (left > 0 && !socket.destroyed) {
          left -= piece.length;
          if (!socket.write(piece)) return void socket.once('drain', pump);
        }
      };
      pump();
    });
  });
}

function assertEnvelope(t: ExecutionContext, a: Answer, status: number, code: string, error: string): void {
  t.false(a.reset, 'no connection reset');
  t.is(a.status, status, a.text.slice(0, 300));
  t.is(a.headers.connection, 'close');
  t.regex(a.headers['content-type'] ?? '', /^application\/json/);
  t.like(JSON.parse(a.text) as Record<string, unknown>, {
    code,
    httpStatus: status,
    error,
    category: 'validation',
    retryable: false,
    correlationId: a.headers['x-correlation-id'],
    params: '{}',
  });
}

let stack: Stack;
test.before(async () => {
  stack = await startStack('sqlite');
});
test.after.always(async () => {
  await stack?.stop();
});

for (const via of ['admin', 'proxy'] as const) {
  const origin = () => (via === 'admin' ? stack.adminUrl : stack.proxyUrl);
  const host = () => new URL(origin()).host;

  test(`${via}: a request line over the limit -> 414 envelope, connection closed`, async (t) => {
    const a = await send(origin(), `GET /healthz?${'q'.repeat(OVER)} HTTP/1.1\r\nhost: ${host()}\r\n\r\n`);
    assertEnvelope(t, a, 414, 'BCK.HTTP.0414', 'URI Too Long');
  });

  test(`${via}: headers over the limit -> 431 envelope, connection closed`, async (t) => {
    const a = await send(origin(), `GET /healthz HTTP/1.1\r\nhost: ${host()}\r\nx-big: ${'h'.repeat(OVER)}\r\n\r\n`);
    assertEnvelope(t, a, 431, 'BCK.HTTP.0431', 'Request Header Fields Too Large');
  });

  test(`${via}: a client still sending 1 MiB of cookie after the limit reads the 431, no reset`, async (t) => {
    const a = await send(origin(), `GET /healthz HTTP/1.1\r\nhost: ${host()}\r\ncookie: `, 1024 * 1024, 'k=v; ');
    assertEnvelope(t, a, 431, 'BCK.HTTP.0431', 'Request Header Fields Too Large');
  });

  test(`${via}: a client still sending 1 MiB of request line reads the 414, no reset`, async (t) => {
    const a = await send(origin(), 'GET /healthz?', 1024 * 1024);
    assertEnvelope(t, a, 414, 'BCK.HTTP.0414', 'URI Too Long');
  });

  test(`${via}: bytes that are not HTTP -> 400 envelope`, async (t) => {
    const a = await send(origin(), 'HELLO THERE\r\n\r\n');
    assertEnvelope(t, a, 400, 'BCK.HTTP.0400', 'Bad Request');
  });

  test(`${via}: the same connection is not reused after the refusal; a new one is served`, async (t) => {
    await send(origin(), `GET /healthz HTTP/1.1\r\nhost: ${host()}\r\nx-big: ${'h'.repeat(OVER)}\r\n\r\n`);
    t.is((await fetch(`${origin()}/healthz`)).status, 200);
  });
}
