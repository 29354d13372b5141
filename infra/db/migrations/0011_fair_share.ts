import type { Knex } from 'knex';

// Fair share between workspaces. Executors claim the next invocation in the
// database (features/invocations/state.ts, `claim`): the workspace furthest
// below its weighted share of the calls in flight, then the highest priority,
// then the oldest. The quotas bound what one workspace may hold.

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('workspaces', (t) => {
    t.integer('share_weight').notNullable().defaultTo(1);
    t.integer('max_in_flight'); // model calls at once, across executors; null: no limit
    t.integer('max_queued'); // QUEUED invocations at once; null: no limit
  });
  await knex.raw(`alter table workspaces add constraint workspaces_share_weight_check check (share_weight between 1 and 1000)`);
  await knex.raw(`alter table workspaces add constraint workspaces_max_in_flight_check check (max_in_flight > 0)`);
  await knex.raw(`alter table workspaces add constraint workspaces_max_queued_check check (max_queued > 0)`);

  await knex.schema.alterTable('deployments', (t) => {
    t.integer('max_concurrent_calls'); // calls to its model server at once, across executors; null: no limit
  });
  await knex.raw(`alter table deployments add constraint deployments_max_concurrent_calls_check check (max_concurrent_calls > 0)`);

  await knex.schema.alterTable('invocations', (t) => {
    t.smallint('priority').notNullable().defaultTo(5);
    t.timestamp('available_at', { useTz: true }); // a retry's backoff: not claimed before
  });
  await knex.raw(`alter table invocations add constraint invocations_priority_check check (priority between 0 and 9)`);
  // The claim's walk: each workspace's queue in the order it runs, and the calls in flight per workspace.
  await knex.raw(`create index invocations_fair on invocations (workspace_id, priority desc, created_at, "order") where status = 'QUEUED'`);
  await knex.raw(`create index invocations_running on invocations (workspace_id, model_id) where status = 'IN_PROGRESS'`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop index if exists invocations_running');
  await knex.raw('drop index if exists invocations_fair');
  await knex.schema.alterTable('invocations', (t) => {
    t.dropColumn('available_at');
    t.dropColumn('priority');
  });
  await knex.schema.alterTable('deployments', (t) => t.dropColumn('max_concurrent_calls'));
  await knex.schema.alterTable('workspaces', (t) => {
    t.dropColumn('max_queued');
    t.dropColumn('max_in_flight');
    t.dropColumn('share_weight');
  });
}
