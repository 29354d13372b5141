import type { Knex } from 'knex';

// Two statements that read the whole invocations table, now each through a
// small partial index:
// - the relay resets, once per pass and in every process that runs one, the
//   QUEUED rows it published long ago (core/invocations/relay.ts). Such rows
//   live between the broker's confirm and the claim;
// - deleting an invocation sets `related_to` to null in the explanations that
//   point at it (the foreign key's ON DELETE SET NULL), once per deleted row:
//   removing a user's invocations (an OAuth application's service user)
//   read the table once for each of them. Only explanations have one.
//
// Built concurrently, outside a transaction: a plain build would hold back
// every insert and update of invocations (POST …/invocation, the executor)
// for as long as it reads the table. A build that failed half-way leaves an
// invalid index behind, dropped before the next attempt.

export const config = { transaction: false };

const INDEXES = {
  invocations_published_queued: `(published_at) where status = 'QUEUED' and published_at is not null`,
  invocations_related_to: `(related_to) where related_to is not null`,
};

export async function up(knex: Knex): Promise<void> {
  for (const [name, definition] of Object.entries(INDEXES)) {
    await knex.raw(`drop index concurrently if exists ${name}`);
    await knex.raw(`create index concurrently ${name} on invocations ${definition}`);
  }
}

export async function down(knex: Knex): Promise<void> {
  for (const name of Object.keys(INDEXES)) await knex.raw(`drop index concurrently if exists ${name}`);
}
