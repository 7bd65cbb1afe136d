import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { type AppError, toEnvelope } from '../shared/errors/app-error.js';
import { settleUnreadBody } from '../shared/unread-body.js';

/**
 * Every answer of the proxy's own begins here: a request body still arriving behind it is drained or the connection
 * closed (shared/unread-body.ts), so no answer, a refusal before the body was read least of all, leaves the next
 * request on the connection waiting behind the unread rest of this one's.
 */
export function writeHead(res: ServerResponse, status: number, headers: OutgoingHttpHeaders): void {
  settleUnreadBody(res.req, res, status);
  res.writeHead(status, headers);
}

export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Readonly<Record<string, string>> = {},
): void {
  const payload = JSON.stringify(body);
  writeHead(res, status, {
    ...headers,
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(payload),
  });
  res.end(payload);
}

export function sendError(res: ServerResponse, err: AppError, correlationId: string, docsUrl: string): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  sendJson(res, err.httpStatus, toEnvelope(err, correlationId, docsUrl), err.headers);
}
