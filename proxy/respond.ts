import type { ServerResponse } from 'node:http';
import { type AppError, toEnvelope } from '../shared/errors/app-error.js';

export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Readonly<Record<string, string>> = {},
): void {
  const payload = JSON.stringify(body);
  res.writeHead(status, {
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
