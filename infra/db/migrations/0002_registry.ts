import type { Knex } from 'knex';

// Storage configurations, files and uploads, deployments, models.

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('storage_configs', (t) => {
    t.increments('id');
    t.integer('workspace_id').notNullable().references('workspaces.id').onDelete('CASCADE');
    t.text('storage_key').notNullable();
    t.text('storage_class').notNullable();
    t.jsonb('connector_init').notNullable(); // without secret values
    t.text('secrets_sealed'); // AES-256-GCM of the secret values
    t.integer('created_by_id').references('users.id').onDelete('SET NULL');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('deleted_at', { useTz: true });
  });
  // Unique among live configurations of a workspace: files keep pointing at a de-registered one by id.
  await knex.raw('create unique index storage_configs_live_key on storage_configs (workspace_id, storage_key) where deleted_at is null');

  await knex.schema.createTable('files', (t) => {
    t.uuid('id').primary();
    t.integer('workspace_id').notNullable().references('workspaces.id').onDelete('CASCADE');
    t.integer('storage_config_id').notNullable().references('storage_configs.id').onDelete('CASCADE');
    t.text('object_key').notNullable();
    t.text('file_name').notNullable();
    t.text('content_type').notNullable();
    t.bigInteger('size').notNullable();
    t.text('sha256').notNullable();
    t.integer('created_by_id').references('users.id').onDelete('SET NULL');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['workspace_id']);
  });

  await knex.schema.createTable('uploads', (t) => {
    t.uuid('id').primary();
    t.integer('workspace_id').notNullable().references('workspaces.id').onDelete('CASCADE');
    t.integer('storage_config_id').notNullable().references('storage_configs.id').onDelete('CASCADE');
    t.text('file_name').notNullable();
    t.text('content_type');
    t.bigInteger('declared_size');
    t.integer('created_by_id').references('users.id').onDelete('SET NULL');
    t.timestamp('expires_at', { useTz: true }).notNullable();
    t.timestamp('used_at', { useTz: true });
    t.uuid('file_id').references('files.id').onDelete('SET NULL');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });

  await knex.schema.createTable('deployments', (t) => {
    t.increments('id');
    t.integer('workspace_id').notNullable().references('workspaces.id').onDelete('CASCADE');
    t.text('deployment_key').notNullable().unique(); // across workspaces, forever: it names the CR
    t.text('registry_connector_class').notNullable();
    t.jsonb('registry_connector_init').notNullable();
    t.text('server_proxy_class').notNullable();
    t.jsonb('server_proxy_init').notNullable();
    t.text('secrets_sealed');
    t.integer('created_by_id').references('users.id').onDelete('SET NULL');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('deleted_at', { useTz: true });
    t.index(['workspace_id']);
  });

  await knex.schema.createTable('models', (t) => {
    t.increments('id');
    t.integer('workspace_id').notNullable().references('workspaces.id').onDelete('CASCADE');
    t.text('model_code').notNullable();
    t.text('version').notNullable();
    t.text('name').notNullable();
    t.text('description').notNullable();
    t.jsonb('input_schema').notNullable();
    t.jsonb('output_schema').notNullable();
    t.jsonb('feedback_schema');
    t.boolean('realtime_execution').notNullable().defaultTo(false);
    t.boolean('allow_download').notNullable().defaultTo(false);
    t.boolean('need_context').notNullable().defaultTo(false);
    t.uuid('model_card_file_id').references('files.id').onDelete('SET NULL');
    t.integer('deployment_id').notNullable().references('deployments.id');
    t.jsonb('native_metadata').notNullable();
    // The chain: an explainer row points at the model it explains; the main model has no parent.
    t.integer('explains_id').references('models.id');
    t.integer('chain_position').notNullable().defaultTo(0); // 0 main model, 1 first explainer, …
    t.integer('created_by_id').references('users.id').onDelete('SET NULL');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('deleted_at', { useTz: true });
    t.unique(['model_code', 'version']); // across workspaces, forever (soft deletes keep the row)
    t.index(['workspace_id']);
    t.index(['explains_id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  for (const table of ['models', 'deployments', 'uploads', 'files', 'storage_configs']) await knex.schema.dropTableIfExists(table);
}
