// Time-ordered identifiers (UUIDv7, RFC 9562 §5.7) for rows appended on the hot paths: payments, cap and ledger
// journal rows. A random UUIDv4 key lands on a random leaf of the primary-key index, so every insert dirties a
// different page; v7 keys arrive in time order and fill the rightmost leaf, which keeps the pages each
// transaction writes few (SQLite writes each dirty page to the WAL at COMMIT) and the index compact.
import { randomFillSync } from 'node:crypto';

const POOL_SIZE = 16 * 1024;
const pool = Buffer.alloc(POOL_SIZE);
let offset = POOL_SIZE;
const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));

/** 48-bit Unix milliseconds, version 7, 74 random bits with the RFC 4122 variant. */
export function uuidv7(now: number = Date.now()): string {
  if (offset + 10 > POOL_SIZE) {
    randomFillSync(pool);
    offset = 0;
  }
  const r = pool.subarray(offset, offset + 10);
  offset += 10;
  const ms = Math.max(0, Math.floor(now));
  const hi = Math.floor(ms / 0x1_0000_0000) & 0xffff; // top 16 of the 48 bits
  const lo = ms >>> 0; // bottom 32 bits
  const b = [
    hi >>> 8,
    hi & 0xff,
    lo >>> 24,
    (lo >>> 16) & 0xff,
    (lo >>> 8) & 0xff,
    lo & 0xff,
    0x70 | ((r[0] ?? 0) & 0x0f),
    r[1] ?? 0,
    0x80 | ((r[2] ?? 0) & 0x3f),
    r[3] ?? 0,
    r[4] ?? 0,
    r[5] ?? 0,
    r[6] ?? 0,
    r[7] ?? 0,
    r[8] ?? 0,
    r[9] ?? 0,
  ].map((x) => HEX[x] ?? '00');
  return `${b[0]}${b[1]}${b[2]}${b[3]}-${b[4]}${b[5]}-${b[6]}${b[7]}-${b[8]}${b[9]}-${b[10]}${b[11]}${b[12]}${b[13]}${b[14]}${b[15]}`;
}
