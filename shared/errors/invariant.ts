// A condition the code itself guarantees did not hold: a bug, a corrupted row, or a database that broke its own
// promise (a locked row that changed). Never the caller's doing, so never a 4xx: the catch points answer the
// generic 500 and log it, and tests can tell it apart from every expected failure by its class.

export class InvariantError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InvariantError';
  }
}

/** Throws InvariantError(message) unless `condition` holds. */
export function invariant(condition: unknown, message: string): asserts condition {
  if (!condition) throw new InvariantError(message);
}
