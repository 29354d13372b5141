import type { Runner } from '../../infra/db/database.js';
import { deleteInBatches } from '../../infra/db/purge.js';
import type { TaskDefinition } from '../../infra/process/scheduler.js';
import type { InvocationStatus } from './store.js';

/** One status an invocation took (migration 0016's triggers write them). */
export interface InvocationEvent {
  id: string;
  invocation_id: string;
  status: InvocationStatus;
  created_at: string;
}

/** An event as read, with the transaction that wrote it: whether a stream has seen it depends on that stream's snapshot. */
export interface StoredEvent extends InvocationEvent {
  tx: string;
}

/** What became visible in a session since a snapshot, and the snapshot to read from next. */
export interface EventsSince {
  snapshot: string;
  events: StoredEvent[];
}

/** Before every transaction: all events are new to it. */
export const FIRST_SNAPSHOT = '1:1:';

/**
 * A session's events committed since `snapshot` and invisible to it, with the
 * current snapshot, read at one instant: a transaction that commits after a
 * later one, with lower event ids, is still read next time, as it was not
 * visible in this snapshot. Events of transactions older than the snapshot's
 * xmin were all visible to it: the index skips them.
 */
const SINCE_SQL = `
select pg_current_snapshot()::text as snapshot,
       coalesce((select json_agg(e order by e.id) from (
         select id::text as id, invocation_id, status, created_at, tx::text as tx from invocation_events
          where session_id = ? and tx >= pg_snapshot_xmin(?::pg_snapshot) and not pg_visible_in_snapshot(tx, ?::pg_snapshot)
       ) e), '[]'::json) as events`;

export const invocationEventsStore = {
  async since(db: Runner, sessionId: string, snapshot: string): Promise<EventsSince> {
    const result = (await db.raw(SINCE_SQL, [sessionId, snapshot, snapshot])) as { rows: Array<{ snapshot: string; events: StoredEvent[] | string }> };
    const row = result.rows[0]!;
    const events = typeof row.events === 'string' ? (JSON.parse(row.events) as StoredEvent[]) : row.events;
    return { snapshot: row.snapshot, events: events.map((event) => ({ ...event, created_at: new Date(event.created_at).toISOString() })) };
  },

  /** Deletes up to `limit` events older than `cutoff`; how many went (the purge task, `eventsPurge`). */
  async removeBefore(db: Runner, cutoff: Date, limit: number): Promise<number> {
    const old = db('invocation_events').where('created_at', '<', cutoff).orderBy('created_at').limit(limit).select('id');
    return db('invocation_events').whereIn('id', old).delete();
  },
};

/** Events go a batch at a time, this often per process. */
const PURGE_EVERY_MS = 60_000;
const PURGE_BATCH = 5000;

/** A background task of its own: events older than the retention go, once a minute and a few batches at a time. */
export function eventsPurge(db: Runner, retentionMs: number, now: () => number = Date.now): TaskDefinition {
  return {
    name: 'invocation_event_purge',
    intervalMs: PURGE_EVERY_MS,
    run: () => deleteInBatches((limit) => invocationEventsStore.removeBefore(db, new Date(now() - retentionMs), limit), PURGE_BATCH),
  };
}
