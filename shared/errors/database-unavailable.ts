// Which failures mean "the database could not serve this now" (unreachable, timed out, out of connections, locked),
// as opposed to a fault in our own code. Those are answered 503 BCK.DATABASE.0001 with Retry-After, never a 500: the
// same request can succeed once the database answers again, and a client must be told to retry, not to report a bug.
//
// Errors arrive from pg, from better-sqlite3 and from MikroORM, which wraps either (DriverException copies the
// driver's `code` and message, and may keep the original as `cause`).

/** SQLSTATE classes (PostgreSQL Appendix A) that are the server's condition, never the statement's fault. */
const UNAVAILABLE_CLASSES = new Set([
  '08', // connection exception
  '53', // insufficient resources: too_many_connections (53300), disk full, out of memory
  '58', // system error (I/O)
]);

/** SQLSTATE codes of the same kind in classes that also hold statement faults. */
const UNAVAILABLE_CODES = new Set([
  '57014', // query_canceled: statement_timeout (DATABASE_STATEMENT_TIMEOUT_MS)
  '57P01', // admin_shutdown
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now (starting up, or in recovery)
  '25P03', // idle_in_transaction_session_timeout
  '55P03', // lock_not_available
  '40001', // serialization_failure
  '40P01', // deadlock_detected
]);

/** Socket errors: the outbound modules (upstream/, the chain client) turn their own into results, never throw these. */
const SOCKET_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/** SQLite result codes (extended codes start with the primary's name): another process's lock, the disk. */
const SQLITE_UNAVAILABLE = /^SQLITE_(BUSY|LOCKED|IOERR|FULL|CANTOPEN|PROTOCOL)/;

/** pg and pg-pool errors that carry no code: the connection died, never came, or never answered. */
const PG_MESSAGES = [
  /^Connection terminated/, // the socket closed (server gone, connect timeout, our own drop: pg-client.ts)
  /^timeout exceeded when trying to connect/, // pg-pool: no connection within connectionTimeoutMillis
  /^Query read timeout/, // query_timeout: no answer at all
  /is not queryable/, // a client whose connection already failed
  /^Cannot use a pool after calling end/, // the process is stopping
];

function matches(err: object): boolean {
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string') {
    if (/^[0-9A-Z]{5}$/.test(code) && (UNAVAILABLE_CLASSES.has(code.slice(0, 2)) || UNAVAILABLE_CODES.has(code)))
      return true;
    if (SOCKET_CODES.has(code) || SQLITE_UNAVAILABLE.test(code)) return true;
  }
  const message = (err as { message?: unknown }).message;
  return typeof message === 'string' && PG_MESSAGES.some((m) => m.test(message));
}

/** True when `err` (or an error it wraps) says the database is unreachable, overloaded or timed out. */
export function isDatabaseUnavailable(err: unknown): boolean {
  let e: unknown = err;
  // A bounded walk: a cause chain is short, and a cyclic one must not loop.
  for (let depth = 0; depth < 5 && typeof e === 'object' && e !== null; depth += 1) {
    if (matches(e)) return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}
