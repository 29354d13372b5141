/** Batches in a row at most, so a large backlog never holds its purge task for long: the next run goes on. */
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
