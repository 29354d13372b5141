import type { Knex } from 'knex';

// The webhook claim takes turns between workspaces (features/webhooks,
// deliveries.store.ts): it walks the workspaces with pending deliveries
// (webhook_deliveries_fair), then the first due deliveries of each endpoint
// of the workspaces under their cap (webhook_deliveries_endpoint_due),
// instead of the oldest due deliveries of all, where one workspace's backlog
// came first.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`create index webhook_deliveries_fair on webhook_deliveries (workspace_id, next_attempt_at) where status = 'pending'`);
  await knex.raw(`create index webhook_deliveries_endpoint_due on webhook_deliveries (endpoint_id, next_attempt_at) where status = 'pending'`);
  await knex.raw('drop index if exists webhook_deliveries_due');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`create index webhook_deliveries_due on webhook_deliveries (next_attempt_at) where status = 'pending'`);
  await knex.raw('drop index if exists webhook_deliveries_endpoint_due');
  await knex.raw('drop index if exists webhook_deliveries_fair');
}
