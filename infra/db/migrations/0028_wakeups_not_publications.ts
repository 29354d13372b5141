import type { Knex } from 'knex';
import { isEmbedded } from '../embedded.js';

// Executors are woken by a message per committed batch and claim from the
// table, so nothing marks an invocation published any more and no pass looks
// for unpublished or long-published rows: the two indexes kept for those
// passes only cost every append and claim their upkeep. The `published_at`
// column stays, unused, until no server of an earlier version runs: their
// prepared statements name it.
//
// Dropped concurrently, outside a transaction, as 0007 built one of them:
// a plain drop waits for, and then holds back, every write of invocations.

export const config = { transaction: false };

const INDEXES = {
  invocations_unpublished: `(created_at) where status = 'QUEUED' and published_at is null`,
  invocations_published_queued: `(published_at) where status = 'QUEUED' and published_at is not null`,
};

const concurrently = (knex: Knex) => (isEmbedded(knex) ? '' : 'concurrently');

export async function up(knex: Knex): Promise<void> {
  for (const name of Object.keys(INDEXES)) await knex.raw(`drop index ${concurrently(knex)} if exists ${name}`);
}

export async function down(knex: Knex): Promise<void> {
  for (const [name, definition] of Object.entries(INDEXES)) {
    await knex.raw(`drop index ${concurrently(knex)} if exists ${name}`);
    await knex.raw(`create index ${concurrently(knex)} ${name} on invocations ${definition}`);
  }
}
