import type { Knex } from 'knex';

// When a workspace last had an invocation claimed moves out of `workspaces`
// into a table of the queue's own. Every claim wrote it, so on `workspaces`
// each claim announced an identity change (0005), which emptied every
// process's authentication cache several hundred times a second, and left
// dead versions of the rows that foreign-key checks and joins read.
// A tiny table kept mostly free takes those writes as in-page updates.
// The claim counts calls per deployment only when a deployment has a limit
// (`deployments_limited`): a lookup of its model per call in flight was a
// third of the claim's reads, spent for nothing on a platform without limits.

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create table workspace_turns (
      workspace_id integer primary key references workspaces (id) on delete cascade,
      last_claimed_at timestamptz not null
    ) with (fillfactor = 50)`);
  await knex.raw('insert into workspace_turns (workspace_id, last_claimed_at) select id, last_claimed_at from workspaces where last_claimed_at is not null');
  await knex.schema.alterTable('workspaces', (t) => t.dropColumn('last_claimed_at'));
  await knex.raw('create index deployments_limited on deployments (id) where max_concurrent_calls is not null');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop index if exists deployments_limited');
  await knex.schema.alterTable('workspaces', (t) => t.timestamp('last_claimed_at', { useTz: true }));
  await knex.raw('update workspaces w set last_claimed_at = t.last_claimed_at from workspace_turns t where t.workspace_id = w.id');
  await knex.schema.dropTable('workspace_turns');
}
