import type { Knex } from 'knex';

// Login and client-credential attempt windows, shared by every auth replica
// (features/auth/rate-limit.ts). Keys are stored as SHA-256: the table never holds
// an e-mail address or a client address in clear.

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('rate_limit_windows', (t) => {
    t.text('key_hash').primary();
    t.integer('count').notNullable();
    t.timestamp('reset_at', { useTz: true }).notNullable();
    t.index(['reset_at']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('rate_limit_windows');
}
