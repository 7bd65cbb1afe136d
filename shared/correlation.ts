import { randomUUID } from 'node:crypto';

const SAFE_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Takes x-correlation-id / x-request-id when well-formed (else generates one); never trusts arbitrary text. */
export function correlationId(header: string | string[] | undefined): string {
  const v = Array.isArray(header) ? header[0] : header;
  return v !== undefined && SAFE_ID.test(v) ? v : randomUUID();
}
