import type { Knex } from 'knex';

// Sessions and invocations. The invocations table is also the outbox: a
// QUEUED row with published_at null has not been confirmed by the broker yet.

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('sessions', (t) => {
    t.uuid('id').primary();
    t.integer('workspace_id').notNullable().references('workspaces.id').onDelete('CASCADE');
    t.integer('user_id').notNullable().references('users.id').onDelete('CASCADE');
    t.integer('model_id').notNullable().references('models.id');
    t.text('state').notNullable().defaultTo('OPEN');
    t.integer('next_order').notNullable().defaultTo(0);
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['model_id', 'user_id']);
    t.index(['workspace_id', 'state']);
  });
  await knex.raw(`alter table sessions add constraint sessions_state_check check (state in ('OPEN', 'CLOSED'))`);

  await knex.schema.createTable('invocations', (t) => {
    t.uuid('id').primary();
    t.integer('workspace_id').notNullable().references('workspaces.id').onDelete('CASCADE');
    t.uuid('session_id').notNullable().references('sessions.id').onDelete('CASCADE');
    t.integer('user_id').notNullable().references('users.id').onDelete('CASCADE');
    t.integer('model_id').notNullable().references('models.id'); // the model that runs it (an explainer for EXPLAIN)
    t.integer('order').notNullable();
    t.text('type').notNullable();
    t.text('request_type').notNullable();
    t.text('body').notNullable();
    t.text('status').notNullable();
    t.text('response').notNullable().defaultTo('');
    t.text('error');
    t.text('model_key').notNullable().defaultTo('');
    t.uuid('related_to').references('invocations.id').onDelete('SET NULL');
    t.boolean('with_explanation').notNullable().defaultTo(false);
    t.text('output_storage_key');
    t.integer('attempts').notNullable().defaultTo(0);
    t.timestamp('published_at', { useTz: true });
    t.timestamp('lease_expires_at', { useTz: true });
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('started_at', { useTz: true });
    t.timestamp('completed_at', { useTz: true });
    t.unique(['session_id', 'order']);
  });
  await knex.raw(`alter table invocations add constraint invocations_status_check check (status in ('QUEUED', 'IN_PROGRESS', 'COMPLETED', 'ERROR'))`);
  await knex.raw(`alter table invocations add constraint invocations_type_check check (type in ('PREDICT', 'EXPLAIN', 'DATA_SUBMISSION'))`);
  // What the relay scans: unpublished work, and leases to recover.
  await knex.raw(`create index invocations_unpublished on invocations (created_at) where status = 'QUEUED' and published_at is null`);
  await knex.raw(`create index invocations_leases on invocations (lease_expires_at) where status = 'IN_PROGRESS'`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('invocations');
  await knex.schema.dropTableIfExists('sessions');
}
