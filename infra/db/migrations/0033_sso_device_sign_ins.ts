import type { Knex } from 'knex';

// The device authorization flow (RFC 8628) of single sign-on, for a CLI on a
// machine without a browser. didyma's auth server stays the provider's only
// client: it keeps the provider's device code sealed here and gives the CLI
// an opaque handle of its own, stored as its SHA-256. Each poll moves
// `next_poll_at` on by the interval in one conditional UPDATE, so a handle
// reaches the provider at most once per interval; a finished sign-in deletes
// its row, so a handle works once.

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('sso_device_sign_ins', (t) => {
    t.text('handle_hash').primary();
    t.text('connection_id').notNullable();
    // The provider's device code and the PKCE verifier of the request, sealed with the platform's key.
    t.text('secrets_sealed').notNullable();
    t.integer('interval_seconds').notNullable();
    t.timestamp('next_poll_at', { useTz: true }).notNullable();
    t.timestamp('expires_at', { useTz: true }).notNullable();
    t.index(['expires_at']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('sso_device_sign_ins');
}
