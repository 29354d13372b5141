import type { Knex } from 'knex';
import { percentile } from './load.js';

// What the database says about the invocations of a set of sessions: every
// figure here comes from the servers' own timestamps, not from the load tool.

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Invocations of `sessionIds` not final yet (QUEUED or IN_PROGRESS). Read
 * through the queue's partial indexes by workspace, so only open rows are
 * read: counting over the sessions' rows read every finished one too, up to
 * a tenth of a second of the database per count during the drain it waits for.
 */
export async function openCount(db: Knex, sessionIds: string[]): Promise<number> {
  const { rows } = (await db.raw(
    `with workspaces as (select distinct workspace_id from sessions where id = any(?::uuid[]))
     select (select count(*) from invocations i where i.status = 'QUEUED' and i.workspace_id in (select workspace_id from workspaces) and i.session_id = any(?::uuid[]))
          + (select count(*) from invocations i where i.status = 'IN_PROGRESS' and i.workspace_id in (select workspace_id from workspaces) and i.session_id = any(?::uuid[])) as n`,
    [sessionIds, sessionIds, sessionIds],
  )) as { rows: Array<{ n: string }> };
  return Number(rows[0]!.n);
}

export async function queuedCount(db: Knex, sessionIds: string[]): Promise<number> {
  const row = (await db('invocations').whereIn('session_id', sessionIds).where({ status: 'QUEUED' }).count('* as n').first()) as { n: string };
  return Number(row.n);
}

/**
 * Polls until every invocation of `sessionIds` is COMPLETED or ERROR. A count
 * reads every row of the sessions (8–20 ms of a database backend during a
 * drain of 15,000), so polling every 100 ms took CPU from the very drain it
 * waited for. The polls space out instead (`nextPollMs`). No figure depends on
 * when the wait notices the end: they all come from the rows' timestamps.
 */
export async function waitFinal(db: Knex, sessionIds: string[], what: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let previous: OpenAt | undefined;
  while (Date.now() < deadline) {
    const now = { open: await openCount(db, sessionIds), at: Date.now() };
    if (now.open === 0) return;
    await sleep(nextPollMs(previous, now));
    previous = now;
  }
  throw new Error(`bench: timed out waiting for ${what} (${await openCount(db, sessionIds)} invocations still open)`);
}

export interface OpenAt {
  open: number;
  /** When it was counted (ms). */
  at: number;
}

const MIN_POLL_MS = 100;
const MAX_POLL_MS = 2000;

/**
 * The pause before the next count: half the time the open invocations would
 * take to finish at the rate seen since the last count, within 100 ms–2 s
 * (the shortest when nothing finished in between).
 */
export function nextPollMs(previous: OpenAt | undefined, now: OpenAt): number {
  if (!previous || now.open >= previous.open || now.at <= previous.at) return MIN_POLL_MS;
  const finishedPerMs = (previous.open - now.open) / (now.at - previous.at);
  return Math.round(Math.min(MAX_POLL_MS, Math.max(MIN_POLL_MS, now.open / finishedPerMs / 2)));
}

export interface Throughput {
  completed: number;
  /** Invocations that ended in ERROR. */
  failed: number;
  /** The errors of the failed ones, most frequent first (at most five texts). */
  errors?: Array<{ error: string; count: number }>;
  /** From the earliest `from` timestamp to the last completed_at. */
  seconds: number;
  /** completed / seconds. */
  rps: number;
}

/**
 * Completed invocations of `sessionIds` per second, between the first `from`
 * (started_at: the executor's work alone; created_at: the whole path, from
 * the first commit of the API) and the last completed_at.
 */
export async function throughput(db: Knex, sessionIds: string[], from: 'created_at' | 'started_at'): Promise<Throughput> {
  const row = (await db('invocations')
    .whereIn('session_id', sessionIds)
    .first(
      db.raw(`count(*) filter (where status = 'COMPLETED')::int as completed`),
      db.raw(`count(*) filter (where status = 'ERROR')::int as failed`),
      db.raw(`extract(epoch from max(completed_at) filter (where status = 'COMPLETED') - min(${from}))::float as seconds`),
    )) as { completed: number; failed: number; seconds: number | null };
  const seconds = row.seconds ?? NaN;
  const errors = row.failed ? await errorsOf(db, sessionIds) : undefined;
  return { completed: row.completed, failed: row.failed, ...(errors ? { errors } : {}), seconds, rps: row.completed / seconds };
}

/** Invocations of `sessionIds` COMPLETED at or after `from` and before `to`. */
export async function completedBetween(db: Knex, sessionIds: string[], from: Date, to: Date): Promise<number> {
  const row = (await db('invocations')
    .whereIn('session_id', sessionIds)
    .where({ status: 'COMPLETED' })
    .where('completed_at', '>=', from)
    .where('completed_at', '<', to)
    .count('* as n')
    .first()) as { n: string | number };
  return Number(row.n);
}

/** Why invocations of `sessionIds` ended in ERROR: a run is no measurement of speed if its failures go unexplained. */
async function errorsOf(db: Knex, sessionIds: string[]): Promise<Array<{ error: string; count: number }>> {
  const rows = (await db('invocations')
    .whereIn('session_id', sessionIds)
    .where({ status: 'ERROR' })
    .groupBy('error')
    .orderBy('count', 'desc')
    .limit(5)
    .select('error', db.raw('count(*)::int as count'))) as Array<{ error: string | null; count: number }>;
  return rows.map((row) => ({ error: row.error ?? '(no message)', count: row.count }));
}

const LEGS = ['queued', 'ran'] as const;

/**
 * 201 → COMPLETED of the completed invocations of `sessionIds` (ms), and where
 * the time goes: append → claimed by an executor (queued: commit, broker hop,
 * claim), → committed COMPLETED (ran: the model call and the completion).
 * (`published_at` is not a leg: marks are written in gathered batches.)
 */
export async function latencies(db: Knex, sessionIds: string[]) {
  const rows = (await db('invocations')
    .whereIn('session_id', sessionIds)
    .where({ status: 'COMPLETED' })
    .select(
      db.raw('extract(epoch from completed_at - created_at) * 1000 as total'),
      db.raw('extract(epoch from started_at - created_at) * 1000 as queued'),
      db.raw('extract(epoch from completed_at - started_at) * 1000 as ran'),
    )) as Array<Record<'total' | (typeof LEGS)[number], string>>;
  const column = (name: 'total' | (typeof LEGS)[number]) => rows.map((row) => Number(row[name])).sort((a, b) => a - b);
  const total = column('total');
  const legs = Object.fromEntries(LEGS.map((leg) => [leg, { p50: percentile(column(leg), 50), p99: percentile(column(leg), 99) }]));
  return { count: total.length, p50: percentile(total, 50), p99: percentile(total, 99), legs };
}

/** `completed_at` (epoch ms, the database's clock) of every COMPLETED invocation of `sessionIds`, by id. */
export async function completedAt(db: Knex, sessionIds: string[]): Promise<Map<string, number>> {
  const rows = (await db('invocations')
    .whereIn('session_id', sessionIds)
    .where({ status: 'COMPLETED' })
    .select('id', db.raw('extract(epoch from completed_at) * 1000 as ms'))) as Array<{ id: string; ms: string }>;
  return new Map(rows.map((row) => [row.id, Number(row.ms)]));
}

/** The database's clock now (epoch ms). */
export async function databaseClockMs(db: Knex): Promise<number> {
  const result = (await db.raw('select extract(epoch from clock_timestamp()) * 1000 as ms')) as { rows: Array<{ ms: string }> };
  return Number(result.rows[0]!.ms);
}
