// Which errors are "the database is unavailable" (503 BCK.DATABASE.0001 with Retry-After) and which stay a fault of
// ours (500): the driver's own errors, MikroORM's wrappers around them, and the ones that must never be taken for an
// outage (a unique violation decides a duplicate; a syntax error is a bug).
import { DeadlockException, DriverException, UniqueConstraintViolationException } from '@mikro-orm/core';
import test from 'ava';
import { AppError, asAppError } from '../../shared/errors/app-error.js';
import { isDatabaseUnavailable } from '../../shared/errors/database-unavailable.js';

const coded = (code: string, message = 'x') => Object.assign(new Error(message), { code });

test('PostgreSQL conditions of the server, not of the statement, are unavailability', (t) => {
  for (const code of [
    '08006',
    '08001',
    '08P01',
    '53300',
    '53100',
    '57014',
    '57P01',
    '57P03',
    '25P03',
    '55P03',
    '40P01',
  ])
    t.true(isDatabaseUnavailable(coded(code)), code);
  for (const code of ['23505', '23503', '42601', '42P01', '22001', '0A000', 'P0001'])
    t.false(isDatabaseUnavailable(coded(code)), code);
});

test("pg's own connection errors, socket errors and SQLite's lock and I/O errors are unavailability", (t) => {
  for (const message of [
    'Connection terminated unexpectedly',
    'Connection terminated due to connection timeout',
    'timeout exceeded when trying to connect',
    'Query read timeout',
    'Client has encountered a connection error and is not queryable',
  ])
    t.true(isDatabaseUnavailable(new Error(message)), message);
  for (const code of ['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND'])
    t.true(isDatabaseUnavailable(coded(code)), code);
  for (const code of ['SQLITE_BUSY', 'SQLITE_BUSY_SNAPSHOT', 'SQLITE_LOCKED', 'SQLITE_IOERR_WRITE', 'SQLITE_FULL'])
    t.true(isDatabaseUnavailable(coded(code)), code);
  for (const code of ['SQLITE_CONSTRAINT_UNIQUE', 'SQLITE_ERROR', 'SQLITE_MISMATCH'])
    t.false(isDatabaseUnavailable(coded(code)), code);
});

test("MikroORM's wrappers are seen through (copied code, or the driver's error as cause)", (t) => {
  t.true(isDatabaseUnavailable(new DriverException(coded('57014', 'canceling statement due to statement timeout'))));
  t.true(isDatabaseUnavailable(new DeadlockException(coded('40P01'))));
  t.false(isDatabaseUnavailable(new UniqueConstraintViolationException(coded('23505'))));
  t.true(isDatabaseUnavailable(new Error('wrapped', { cause: new Error('Query read timeout') })));
  // A cyclic cause chain ends.
  const a = new Error('a');
  const b = new Error('b', { cause: a });
  Object.assign(a, { cause: b });
  t.false(isDatabaseUnavailable(a));
});

test('anything else is not: a plain error, an AppError, a string, nothing', (t) => {
  for (const e of [new Error('boom'), new TypeError('x is undefined'), new AppError('BCK.HTTP.0400'), 'text', null, 7])
    t.false(isDatabaseUnavailable(e));
});

test('the catch points answer an outage 503 BCK.DATABASE.0001 with Retry-After, anything unknown 500', (t) => {
  const outage = asAppError(coded('53300', 'sorry, too many clients already'));
  t.is(outage.code, 'BCK.DATABASE.0001');
  t.is(outage.httpStatus, 503);
  t.deepEqual(outage.headers, { 'retry-after': '2' });
  // The driver's message names the server's state: it never reaches the wire.
  t.is(outage.details, 'The database is unavailable');
  t.is(asAppError(new Error('boom')).code, 'BCK.HTTP.0500');
});
