import type { Knex } from 'knex';

// The comparison of an alias's versions reads the sessions opened through the alias before its
// window ends; this index finds them without reading the workspace's other sessions.

export async function up(knex: Knex): Promise<void> {
  await knex.raw('create index sessions_alias on sessions (workspace_id, alias, created_at) where alias is not null');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop index if exists sessions_alias');
}
