import type { Knex } from 'knex';
import { isEmbedded } from '../embedded.js';

// The invocations table's upkeep, as it grows.
//
// Two statements read the whole table, now each through a small partial
// index:
// - the relay resets, once per pass and in every process that runs one, the
//   QUEUED rows it published long ago (features/invocations/relay.ts). Such rows
//   live between the broker's confirm and the claim;
// - deleting an invocation sets `related_to` to null in the explanations that
//   point at it (the foreign key's ON DELETE SET NULL), once per deleted row:
//   removing a user's invocations (an OAuth application's service user)
//   read the table once for each of them. Only explanations have one.
//
// Built concurrently, outside a transaction: a plain build would hold back
// every insert and update of invocations (POST …/invocation, the executor)
// for as long as it reads the table. A build that failed half-way leaves an
// invalid index behind, dropped before the next attempt. The embedded PGlite
// (one connection, nothing else running while it migrates) builds them
// plainly: on a data folder a concurrent build at times never returned, and
// `didyma dev` hung at start.
//
// ANALYZE keeps no statistics of the payloads (body, response, error): no
// statement filters or joins on them, and sorting a sample of large texts was
// half of what each analyze of the table cost (0.3 s of CPU on 40,000 rows,
// every minute while the table grows by a tenth a minute). Setting a column's
// statistics target takes a lock that lets reads and writes go on.

export const config = { transaction: false };

const INDEXES = {
  invocations_published_queued: `(published_at) where status = 'QUEUED' and published_at is not null`,
  invocations_related_to: `(related_to) where related_to is not null`,
};

const PAYLOADS = ['body', 'response', 'error'];

const concurrently = (knex: Knex) => (isEmbedded(knex) ? '' : 'concurrently');

export async function up(knex: Knex): Promise<void> {
  for (const [name, definition] of Object.entries(INDEXES)) {
    await knex.raw(`drop index ${concurrently(knex)} if exists ${name}`);
    await knex.raw(`create index ${concurrently(knex)} ${name} on invocations ${definition}`);
  }
  await knex.raw(`alter table invocations ${PAYLOADS.map((column) => `alter column ${column} set statistics 0`).join(', ')}`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`alter table invocations ${PAYLOADS.map((column) => `alter column ${column} set statistics -1`).join(', ')}`);
  for (const name of Object.keys(INDEXES)) await knex.raw(`drop index ${concurrently(knex)} if exists ${name}`);
}
