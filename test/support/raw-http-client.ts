// An HTTP/1.1 client on a bare socket, for requests fetch and node:http refuse to send: percent-encoded bytes that
// are not UTF-8 in a path (a lone surrogate, WTF-8 encoded), control bytes and obs-text in header values, dot
// segments no URL parser resolved. One request per connection (`connection: close`), read to the end.
import { connect } from 'node:net';

export interface RawRequest {
  readonly method: string;
  /** The request target exactly as sent (already percent-encoded). */
  readonly target: string;
  /** Header values as bytes, sent as they are. */
  readonly headers: readonly (readonly [string, Buffer])[];
  readonly body?: Buffer | undefined;
}

export interface RawResponse {
  /**
   * 0 when the server reset the connection before any answer could be read: it refused an oversized request
   * (Node answers 431 and closes while the rest is still arriving, and the kernel's reset can discard that answer).
   */
  readonly status: number;
  /** The answer's first bytes, for failure messages. */
  readonly text: string;
  /** Bytes of the request (head and body). */
  readonly sent: number;
}

/** Sends one request to `origin` (http://host:port); fails after `timeoutMs` without a complete answer (a hang). */
export function rawHttp(origin: string, req: RawRequest, timeoutMs = 60_000): Promise<RawResponse> {
  const { hostname, port } = new URL(origin);
  const head = Buffer.concat([
    Buffer.from(`${req.method} ${req.target} HTTP/1.1\r\nhost: ${hostname}:${port}\r\nconnection: close\r\n`, 'latin1'),
    ...req.headers.flatMap(([name, value]) => [
      Buffer.from(`${name}: `, 'latin1'),
      value,
      Buffer.from('\r\n', 'latin1'),
    ]),
    Buffer.from(req.body === undefined ? '\r\n' : `content-length: ${req.body.length}\r\n\r\n`, 'latin1'),
  ]);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const socket = connect({ host: hostname, port: Number(port) });
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no complete answer to ${req.method} ${req.target.slice(0, 200)} within ${timeoutMs} ms`));
    }, timeoutMs);
    const done = () => {
      clearTimeout(timer);
      const raw = Buffer.concat(chunks).toString('latin1');
      const m = /^HTTP\/1\.[01] (\d{3})/.exec(raw);
      if (m === null)
        reject(new Error(`not an HTTP answer to ${req.method} ${req.target.slice(0, 200)}: ${raw.slice(0, 200)}`));
      else resolve({ status: Number(m[1]), text: raw.slice(0, 2000), sent: head.length + (req.body?.length ?? 0) });
    };
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('end', done);
    // The server may answer (431, 413) and close before the whole request was written: keep what it said.
    socket.on('error', (err: NodeJS.ErrnoException) => {
      if (chunks.length > 0) done();
      else if (err.code === 'ECONNRESET' || err.code === 'EPIPE') {
        clearTimeout(timer);
        resolve({
          status: 0,
          text: `connection ${err.code} before any answer`,
          sent: head.length + (req.body?.length ?? 0),
        });
      } else {
        clearTimeout(timer);
        reject(err);
      }
    });
    socket.write(head);
    if (req.body !== undefined) socket.write(req.body);
  });
}

/** UTF-8, except that a lone surrogate is encoded like any other code point (WTF-8), as a hostile client may. */
export function wtf8(s: string): Buffer {
  const bytes: number[] = [];
  for (let i = 0; i < s.length; i++) {
    let c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        c = 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00);
        i++;
      }
    }
    if (c < 0x80) bytes.push(c);
    else if (c < 0x800) bytes.push(0xc0 | (c >> 6), 0x80 | (c & 0x3f));
    else if (c < 0x10000) bytes.push(0xe0 | (c >> 12), 0x80 | ((c >> 6) & 0x3f), 0x80 | (c & 0x3f));
    else bytes.push(0xf0 | (c >> 18), 0x80 | ((c >> 12) & 0x3f), 0x80 | ((c >> 6) & 0x3f), 0x80 | (c & 0x3f));
  }
  return Buffer.from(bytes);
}

/** Percent-encodes every byte but unreserved letters, digits, `-`, `_` and `~` (dots too: no dot segments). */
export function percentEncode(bytes: Buffer): string {
  let out = '';
  for (const b of bytes) {
    const ch = String.fromCharCode(b);
    out += /[A-Za-z0-9_~-]/.test(ch) ? ch : `%${b.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/** One answer read off a kept-alive connection. */
export interface RawAnswer {
  readonly status: number;
  /** Header names in lower case; a repeated header keeps its last value. */
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

/**
 * What became of a connection after its first request was answered: `closed` (the server said `connection: close`
 * and closed it), `answered` (it kept the connection and answered the second request on it), or one of the
 * failures: `silent` (no answer to the first or the second request within the bound: the hang), `unannounced` (the
 * server closed or reset the connection without saying so, where a keep-alive client would have its second request
 * cut), `open-after-close` (it said `connection: close` and kept the connection open).
 */
export type NextOutcome =
  | { readonly kind: 'closed'; readonly first: RawAnswer }
  | { readonly kind: 'answered'; readonly first: RawAnswer; readonly second: RawAnswer }
  | { readonly kind: 'silent' | 'unannounced' | 'open-after-close'; readonly first?: RawAnswer; readonly note: string };

/** A request head for a kept-alive connection (no `connection` header: HTTP/1.1 keeps it alive). */
export function keepAliveHead(origin: string, method: string, target: string, headers: Record<string, string>): string {
  const { host } = new URL(origin);
  const lines = [
    `${method} ${target} HTTP/1.1`,
    `host: ${host}`,
    ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`),
  ];
  return `${lines.join('\r\n')}\r\n\r\n`;
}

/** The first complete answer in `buf` (content-length or chunked framing), and the bytes after it. */
function firstAnswer(buf: Buffer): { answer: RawAnswer; rest: Buffer } | undefined {
  const split = buf.indexOf('\r\n\r\n');
  if (split < 0) return undefined;
  const [statusLine = '', ...lines] = buf.subarray(0, split).toString('latin1').split('\r\n');
  const headers: Record<string, string> = {};
  for (const l of lines) headers[l.slice(0, l.indexOf(':')).toLowerCase()] = l.slice(l.indexOf(':') + 1).trim();
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1] ?? '0');
  const start = split + 4;
  if (headers['transfer-encoding']?.toLowerCase() === 'chunked') {
    let at = start;
    const parts: Buffer[] = [];
    for (;;) {
      const eol = buf.indexOf('\r\n', at);
      if (eol < 0) return undefined;
      const size = Number.parseInt(buf.subarray(at, eol).toString('latin1'), 16);
      if (buf.length < eol + 2 + size + 2) return undefined;
      if (size === 0) {
        return {
          answer: { status, headers, body: Buffer.concat(parts).toString('utf8') },
          rest: buf.subarray(eol + 4),
        };
      }
      parts.push(buf.subarray(eol + 2, eol + 2 + size));
      at = eol + 2 + size + 2;
    }
  }
  const length = Number(headers['content-length'] ?? '0');
  if (buf.length < start + length) return undefined;
  return {
    answer: { status, headers, body: buf.subarray(start, start + length).toString('utf8') },
    rest: buf.subarray(start + length),
  };
}

/**
 * Sends `first` (head and body) on a new kept-alive connection and reads its answer; if that answer keeps the
 * connection, sends `second` on it and reads that answer. Every wait is bounded by `waitMs`: a server that neither
 * answers nor closes in that time is `silent`.
 */
export function requestThenNext(
  origin: string,
  first: { readonly head: string; readonly body?: Buffer | undefined },
  second: string,
  waitMs: number,
): Promise<NextOutcome> {
  const { hostname, port } = new URL(origin);
  return new Promise((resolve) => {
    const socket = connect({ host: hostname, port: Number(port) });
    let buf: Buffer = Buffer.alloc(0);
    let answer1: RawAnswer | undefined;
    let settled = false;
    let timer: NodeJS.Timeout | undefined;
    const finish = (outcome: NextOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(outcome);
    };
    const bound = (what: string) => {
      clearTimeout(timer);
      timer = setTimeout(() => {
        if (answer1?.headers.connection?.toLowerCase() === 'close')
          finish({ kind: 'open-after-close', first: answer1, note: `${what}: still open ${waitMs} ms after` });
        else
          finish({
            kind: 'silent',
            ...(answer1 === undefined ? {} : { first: answer1 }),
            note: `${what}: no answer within ${waitMs} ms`,
          });
      }, waitMs);
    };
    const gone = (how: string) => {
      if (answer1 !== undefined && answer1.headers.connection?.toLowerCase() === 'close')
        finish({ kind: 'closed', first: answer1 });
      else
        finish({
          kind: 'unannounced',
          ...(answer1 === undefined ? {} : { first: answer1 }),
          note: `${how} ${answer1 === undefined ? 'before the first answer' : 'after a first answer that kept the connection'}`,
        });
    };
    socket.on('data', (chunk: Buffer) => {
      buf = Buffer.concat([buf, chunk]);
      const got = firstAnswer(buf);
      if (got === undefined) return;
      buf = got.rest;
      if (answer1 === undefined) {
        answer1 = got.answer;
        if (answer1.headers.connection?.toLowerCase() === 'close') {
          bound('the close after the first answer');
          return;
        }
        bound('the second request');
        socket.write(second);
        return;
      }
      finish({ kind: 'answered', first: answer1, second: got.answer });
    });
    socket.on('end', () => gone('closed (FIN)'));
    socket.on('error', (err: NodeJS.ErrnoException) => gone(`error ${err.code ?? err.message}`));
    bound('the first request');
    socket.write(first.head);
    if (first.body !== undefined) socket.write(first.body);
  });
}
