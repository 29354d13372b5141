import type { Runner } from '../../infra/db/database.js';
import { deleteInBatches } from '../../infra/db/purge.js';
import type { TaskDefinition } from '../../infra/process/scheduler.js';
import type { WebhookDeliveriesStore } from './deliveries.store.js';

const PURGE_EVERY_MS = 60_000;
const PURGE_BATCH = 1000;

/** A background task of its own: finished deliveries older than the retention go with their attempts; pending ones stay. */
export function deliveriesPurge(db: Runner, store: Pick<WebhookDeliveriesStore, 'removeFinishedBefore'>, retentionMs: number, now: () => number = Date.now): TaskDefinition {
  return {
    name: 'webhook_delivery_purge',
    intervalMs: PURGE_EVERY_MS,
    run: () => deleteInBatches((limit) => store.removeFinishedBefore(db, new Date(now() - retentionMs), limit), PURGE_BATCH),
  };
}
