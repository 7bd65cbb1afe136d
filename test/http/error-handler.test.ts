// The admin's one catch point names what was wrong with a request the body parser refused, by the parser's error
// type, instead of calling every framework 4xx "not valid JSON"; over HTTP and for each type it knows.
import test from 'ava';
import { classify } from '../../admin/middleware/error-handler.js';
import { AppError } from '../../shared/errors/app-error.js';
import type { ErrorCode } from '../../shared/errors/catalogue.js';
import { InvariantError } from '../../shared/errors/invariant.js';
import { type Stack, startStack } from '../support/stack.js';

/** An error as raw-body / co-body raise it (http-errors: status, type, expose). */
const framework = (status: number, type: string, message = 'framework wording') =>
  Object.assign(new Error(message), { status, statusCode: status, type, expose: status < 500 });

test('each parser error type maps to its code and a named reason', (t) => {
  const cases: [number, string, ErrorCode, string][] = [
    [400, 'entity.parse.failed', 'BCK.HTTP.0400', 'request body is not valid JSON'],
    [413, 'entity.too.large', 'BCK.HTTP.0413', 'request body exceeds the size limit'],
    [413, 'parameters.too.many', 'BCK.HTTP.0413', 'request body has too many form parameters'],
    [400, 'request.size.invalid', 'BCK.HTTP.0400', 'request body length does not match its Content-Length'],
    [400, 'request.aborted', 'BCK.HTTP.0400', 'the client aborted the request body'],
    [415, 'encoding.unsupported', 'BCK.HTTP.0415', 'unsupported charset'],
    [415, 'charset.unsupported', 'BCK.HTTP.0415', 'unsupported charset'],
  ];
  for (const [status, type, code, details] of cases) {
    const e = classify(framework(status, type));
    t.is(e.code, code, type);
    t.is(e.details, details, type);
  }
});

test("co-body's parse failures: JSON by its SyntaxError, a form otherwise", (t) => {
  const json = Object.assign(new SyntaxError('Unexpected end of JSON input'), { status: 400, body: '{"a":' });
  t.like(classify(json), { code: 'BCK.HTTP.0400', details: 'request body is not valid JSON' });
  const form = Object.assign(new RangeError('Parameter limit exceeded'), { status: 400, body: 'a=1&b=2' });
  t.like(classify(form), { code: 'BCK.HTTP.0400', details: 'request body is not a valid form' });
});

test('an unknown framework 4xx keeps its own exposed wording, never "not valid JSON"; an unexposed one a generic one', (t) => {
  t.like(classify(framework(400, 'something.new', 'stream encoding should not be set')), {
    code: 'BCK.HTTP.0400',
    details: 'stream encoding should not be set',
  });
  const hidden = Object.assign(new Error('internal words'), { status: 400, expose: false });
  t.like(classify(hidden), { code: 'BCK.HTTP.0400', details: 'the request could not be processed' });
});

test('AppErrors pass through; an invariant failure and anything else is the generic 500 keeping its cause', (t) => {
  const own = new AppError('BCK.HTTP.0404', { details: 'x' });
  t.is(classify(own), own);
  const broken = new InvariantError('budget changed under its row lock');
  const e = classify(broken);
  t.is(e.code, 'BCK.HTTP.0500');
  t.is(e.details, 'Internal server error');
  t.is(e.cause, broken);
});

let stack: Stack;
test.before(async () => {
  stack = await startStack('sqlite');
});
test.after.always(async () => {
  await stack?.stop();
});

test('over HTTP: an unknown Content-Encoding is 415 naming it; broken JSON is 400 naming it', async (t) => {
  const { apiKey } = await stack.user();
  const post = (headers: Record<string, string>, body: string) =>
    fetch(`${stack.adminUrl}/api/v1/protocol/agents`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', ...headers },
      body,
    });
  const enc = await post({ 'content-encoding': 'x-unknown' }, '{}');
  t.is(enc.status, 415);
  t.like(await enc.json(), { code: 'BCK.HTTP.0415', details: 'unsupported Content-Encoding' });
  const bad = await post({}, '{"name":');
  t.is(bad.status, 400);
  t.like(await bad.json(), { code: 'BCK.HTTP.0400', details: 'request body is not valid JSON' });
});
