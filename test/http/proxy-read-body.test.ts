// proxy/http/read-body.ts against a real node:http server: a client that left before its body was read (the
// read began after Node had destroyed the request, e.g. while the API key was looked up) fails the read at once
// with the cut-off 400, rather than after the whole body timeout (which on /router/proxy holds the user's slot).
import { once } from 'node:events';
import { type IncomingMessage, type Server, createServer } from 'node:http';
import { type AddressInfo, connect } from 'node:net';
import test from 'ava';
import { type BodyLimits, readBody, readJson } from '../../proxy/http/read-body.js';
import { AppError } from '../../shared/errors/app-error.js';

/** Longer than any test here may take: a read that waits for it fails with 408, not the 400 asserted. */
const LIMITS: BodyLimits = { maxBytes: 1024, timeoutMs: 60_000 };

let server: Server;
let port: number;
/** The requests the server received, each handed to the test once Node has destroyed it. */
const destroyed: IncomingMessage[] = [];
const waiters: ((req: IncomingMessage) => void)[] = [];

test.before(async () => {
  server = createServer((req) => {
    // The read is delayed until the client is gone: Node destroys the request and emits its 'close'.
    req.once('close', () => {
      const waiter = waiters.shift();
      if (waiter === undefined) destroyed.push(req);
      else waiter(req);
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  port = (server.address() as AddressInfo).port;
});
test.after.always(() => {
  server.closeAllConnections();
  server.close();
});

/** Sends a request declaring 100 bytes of body, 10 of them, then closes; resolves with the destroyed request. */
async function abandonedRequest(): Promise<IncomingMessage> {
  const req = new Promise<IncomingMessage>((resolve) => {
    const ready = destroyed.shift();
    if (ready === undefined) waiters.push(resolve);
    else resolve(ready);
  });
  const socket = connect(port, '127.0.0.1');
  socket.on('error', () => undefined); // the server may answer the cut request with a reset
  await once(socket, 'connect');
  socket.end(
    'POST /body HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{"partial"',
  );
  return req;
}

test('readBody on a request whose client already left: 400 BCK.HTTP.0400 "the request body was cut off"', async (t) => {
  const req = await abandonedRequest();
  t.true(req.destroyed);
  const err = await t.throwsAsync(readBody(req, LIMITS), { instanceOf: AppError });
  t.is(err?.code, 'BCK.HTTP.0400');
  t.is(err?.httpStatus, 400);
  t.is(err?.details, 'the request body was cut off');
});

test('readJson on a request whose client already left: the same 400', async (t) => {
  const req = await abandonedRequest();
  const err = await t.throwsAsync(readJson(req, LIMITS), { instanceOf: AppError });
  t.is(err?.code, 'BCK.HTTP.0400');
  t.is(err?.details, 'the request body was cut off');
});

test('a client whose connection resets while its body is being read: the same 400, not the socket error (a 500)', async (t) => {
  let outcome: (v: unknown) => void = () => undefined;
  const settled = new Promise<unknown>((resolve) => {
    outcome = resolve;
  });
  const reading = createServer((req) => {
    readBody(req, LIMITS).then(outcome, outcome);
  });
  reading.listen(0, '127.0.0.1');
  await once(reading, 'listening');
  try {
    const socket = connect((reading.address() as AddressInfo).port, '127.0.0.1');
    socket.on('error', () => undefined);
    await once(socket, 'connect');
    socket.write('POST /body HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-length: 100\r\n\r\n{"partial"');
    await new Promise((resolve) => setTimeout(resolve, 100)); // the read is under way
    socket.resetAndDestroy();
    const err = await settled;
    t.true(err instanceof AppError, String(err));
    t.is((err as AppError).code, 'BCK.HTTP.0400');
    t.is((err as AppError).details, 'the request body was cut off');
  } finally {
    reading.closeAllConnections();
    reading.close();
  }
});
