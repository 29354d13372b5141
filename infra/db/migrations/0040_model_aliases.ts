import type { Knex } from 'knex';

// Aliases (`production`, `staging`) name one live version of a model code in a workspace.
// Every move is a row of model_alias_moves, written in the move's transaction; it outlives the
// alias, so its history stays readable after a delete. A session records the alias it was
// opened through; its model_id keeps the version it resolved to for its whole life.

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('model_aliases', (t) => {
    t.increments('id').primary();
    t.integer('workspace_id').notNullable().references('workspaces.id').onDelete('CASCADE');
    t.text('model_code').notNullable();
    t.text('alias').notNullable();
    t.integer('model_id').notNullable().references('models.id');
    t.integer('updated_by_id').nullable().references('users.id').onDelete('SET NULL');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.unique(['workspace_id', 'model_code', 'alias']);
  });
  await knex.raw(`alter table model_aliases add constraint model_aliases_alias_check check (alias ~ '^[a-z][a-z0-9-]{0,39}$')`);
  await knex.raw('create index model_aliases_list on model_aliases (workspace_id, model_code, created_at desc, id desc)');
  await knex.raw('create index model_aliases_model on model_aliases (model_id)');

  await knex.schema.createTable('model_alias_moves', (t) => {
    t.increments('id').primary();
    t.integer('workspace_id').notNullable().references('workspaces.id').onDelete('CASCADE');
    t.text('model_code').notNullable();
    t.text('alias').notNullable();
    t.text('from_version').nullable();
    t.text('to_version').nullable();
    t.integer('actor_user_id').nullable().references('users.id').onDelete('SET NULL');
    t.text('request_id').nullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  await knex.raw('create index model_alias_moves_list on model_alias_moves (workspace_id, model_code, alias, created_at desc, id desc)');

  await knex.schema.alterTable('sessions', (t) => {
    t.text('alias').nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('sessions', (t) => {
    t.dropColumn('alias');
  });
  await knex.schema.dropTable('model_alias_moves');
  await knex.schema.dropTable('model_aliases');
}
