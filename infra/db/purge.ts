/** Batches in a row at most, so a large backlog never holds its caller (the sweeper) for long: the next pass goes on. */
const MAX_BATCHES = 10;

/** Deletes with `remove(limit)` a batch at a time until a batch comes back short, or MAX_BATCHES; how many went. */
export async function deleteInBatches(remove: (limit: number) => Promise<number>, batch: number): Promise<number> {
  let removed = 0;
  for (let round = 0; round < MAX_BATCHES; round++) {
    const gone = await remove(batch);
    removed += gone;
    if (gone < batch) break;
  }
  return removed;
}

/** `task` at most once per `everyMs` in this process, however often it is called: a chore riding on a faster loop. */
export function atMostEvery(everyMs: number, task: () => Promise<unknown>): () => Promise<void> {
  let last = -Infinity;
  return async () => {
    if (Date.now() - last < everyMs) return;
    last = Date.now();
    await task();
  };
}
