import type { Runner } from '../../infra/db/database.js';
import { atMostEvery, deleteInBatches } from '../../infra/db/purge.js';
import type { WebhookDeliveriesStore } from './deliveries.store.js';

const PURGE_EVERY_MS = 60_000;
const PURGE_BATCH = 1000;

/** The sweeper's chore: finished deliveries older than the retention go with their attempts; pending ones stay. */
export function deliveriesPurge(db: Runner, store: Pick<WebhookDeliveriesStore, 'removeFinishedBefore'>, retentionMs: number, now: () => number = Date.now) {
  return atMostEvery(PURGE_EVERY_MS, () => deleteInBatches((limit) => store.removeFinishedBefore(db, new Date(now() - retentionMs), limit), PURGE_BATCH));
}
