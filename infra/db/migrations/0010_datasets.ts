import type { Knex } from 'knex';

// Datasets exported from closed sessions: one row per immutable version. The
// JSON Lines file and its manifest live in a storage configuration of the
// workspace; the row records where, and what they hold.

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('datasets', (t) => {
    t.uuid('id').primary();
    t.integer('workspace_id').notNullable().references('workspaces.id').onDelete('CASCADE');
    t.integer('created_by_id').notNullable().references('users.id').onDelete('CASCADE');
    t.integer('storage_config_id').notNullable().references('storage_configs.id').onDelete('CASCADE');
    t.text('name').notNullable();
    t.integer('version').notNullable();
    t.jsonb('selection').notNullable();
    t.text('object_key').notNullable();
    t.text('manifest_object_key').notNullable();
    t.integer('row_count').notNullable();
    t.bigInteger('size').notNullable();
    t.text('sha256').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    // A version is written once: a second export of the same name is the next version.
    t.unique(['workspace_id', 'created_by_id', 'name', 'version']);
    t.index(['workspace_id', 'created_by_id', 'created_at', 'id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('datasets');
}
