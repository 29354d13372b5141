import type { Knex } from 'knex';

// The webhook claim takes turns between workspaces (features/webhooks,
// deliveries.store.ts): it walks the workspaces with pending deliveries, and
// each one's due deliveries in order, through this index, instead of the
// oldest due deliveries of all workspaces, where one workspace's backlog came
// first.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`create index webhook_deliveries_fair on webhook_deliveries (workspace_id, next_attempt_at) where status = 'pending'`);
  await knex.raw('drop index if exists webhook_deliveries_due');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`create index webhook_deliveries_due on webhook_deliveries (next_attempt_at) where status = 'pending'`);
  await knex.raw('drop index if exists webhook_deliveries_fair');
}
