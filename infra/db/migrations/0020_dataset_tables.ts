import type { Knex } from 'knex';

// A dataset version's table: the records typed into columns, written beside
// them as JSON Lines or Parquet. Versions exported before have none (null).

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('datasets', (t) => {
    t.text('table_format');
    t.text('table_object_key');
    t.bigInteger('table_size');
    t.text('table_sha256');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('datasets', (t) => t.dropColumns('table_format', 'table_object_key', 'table_size', 'table_sha256'));
}
