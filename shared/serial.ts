// Work that must not overlap per key inside one process (the PostgreSQL runner's transactions on one buyer's rows):
// tasks given the same key run one after another, in the order given. A failed task does not stop the ones queued
// behind it. The map holds only keys with work queued or running. It only spares resources inside one process;
// correctness never rests on it (the database's locks and unique keys decide across processes).

/** Returns `run(key, task)`: `task` starts once every earlier task of `key` has ended. */
export function keyedSerializer(): <T>(key: string, task: () => Promise<T>) => Promise<T> {
  const tails = new Map<string, Promise<unknown>>();
  return <T>(key: string, task: () => Promise<T>): Promise<T> => {
    const previous = tails.get(key) ?? Promise.resolve();
    const mine = previous.then(task, task);
    const tail = mine.catch(() => undefined);
    tails.set(key, tail);
    void tail.then(() => {
      if (tails.get(key) === tail) tails.delete(key);
    });
    return mine;
  };
}
