import type { Knex } from 'knex';

// Sessions of the web dashboard. The browser holds only an opaque random id;
// the row is keyed by its SHA-256, so a copy of the table cannot be replayed
// as cookies, and the user's token pair is sealed (AES-256-GCM) at rest.

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('dashboard_sessions', (t) => {
    t.text('id_hash').primary();
    t.integer('user_id').notNullable().references('users.id').onDelete('CASCADE');
    t.integer('workspace_id').references('workspaces.id').onDelete('CASCADE');
    t.text('tokens_sealed').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('refreshed_at', { useTz: true });
    t.timestamp('expires_at', { useTz: true }).notNullable();
    t.index(['user_id']);
    t.index(['expires_at']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('dashboard_sessions');
}
