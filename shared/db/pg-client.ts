// The PostgreSQL client every pool of the service uses: pg's own, except that a statement the server never answered
// ends its connection.
//
// pg's `query_timeout` rejects a statement whose answer has not come in time, but it leaves the statement active on
// the connection (pg 8: only pipeline mode destroys it), and a pool that gets the connection back (kysely releases
// it without an error) hands it out again: every later statement on it queues behind an answer that may never come.
// A database that accepts connections but stopped answering (a network path that drops packets, a stalled server)
// then holds every pooled connection, and with them the callers' requests, until TCP gives up, which took 22 minutes
// when it was seen. Destroying the socket instead makes pg mark the client unusable, so the pool discards it on
// release and opens a fresh connection for the next caller, and the server, once it hears of it, rolls back whatever
// transaction was open on it.
//
// The project's `pg` is pinned to the version @mikro-orm/postgresql pins, so npm installs one copy and this class is
// the very Client class the ORM's pool runs (a second copy would work, but as two versions of the driver at once).
import pg from 'pg';

/** pg's message for a statement that outlived `query_timeout` (client.js). */
const READ_TIMEOUT = 'Query read timeout';

function dropIfUnanswered(client: pg.Client, err: unknown): void {
  if (err instanceof Error && err.message === READ_TIMEOUT) client.connection.stream.destroy();
}

type QueryFn = (this: pg.Client, ...args: unknown[]) => unknown;

/** pg.Client, ending its connection when a statement times out unanswered (for the pool's `Client` option). */
export class BoundedClient extends pg.Client {}

const plainQuery = pg.Client.prototype.query as unknown as QueryFn;
const boundedQuery: QueryFn = function (this: pg.Client, ...args) {
  // The callback form (pg-pool's own `pool.query`): the callback is the last argument.
  const last = args.length - 1;
  const callback = args[last];
  if (typeof callback === 'function') {
    args[last] = (err: unknown, result: unknown) => {
      dropIfUnanswered(this, err);
      (callback as (e: unknown, r: unknown) => void)(err, result);
    };
    return plainQuery.apply(this, args);
  }
  const result = plainQuery.apply(this, args);
  // The promise form (kysely, sql.ts): watch a branch of it; the caller still gets the rejection.
  if (result instanceof Promise) result.catch((err: unknown) => dropIfUnanswered(this, err));
  return result;
};
// Overridden on the prototype: pg's query has a dozen overloads that a subclass method would have to restate.
BoundedClient.prototype.query = boundedQuery as unknown as typeof pg.Client.prototype.query;
