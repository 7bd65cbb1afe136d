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
