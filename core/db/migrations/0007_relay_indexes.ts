import type { Knex } from 'knex';

// The relay resets, once per pass and in every process that runs one, the
// QUEUED rows it published long ago (core/invocations/relay.ts). Until this
// index nothing covered them, so each pass read the whole invocations table.
// Such rows live between the broker's confirm and the claim, so the index
// stays small whatever the table's size.
//
// Built concurrently, outside a transaction: a plain build would hold back
// every insert and update of invocations (POST …/invocation, the executor)
// for as long as it reads the table. A build that failed half-way leaves an
// invalid index behind, dropped before the next attempt.

export const config = { transaction: false };

export async function up(knex: Knex): Promise<void> {
  await knex.raw('drop index concurrently if exists invocations_published_queued');
  await knex.raw(`create index concurrently invocations_published_queued on invocations (published_at) where status = 'QUEUED' and published_at is not null`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop index concurrently if exists invocations_published_queued');
}
