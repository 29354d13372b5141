import type { Knex } from 'knex';

// A sign-in under way remembers the window it was counted in for its source
// (features/identity/sso/starts.ts), so that finishing it takes the count back:
// a source is held to the sign-ins it left unfinished, not to those it made.

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('sso_sign_ins', (t) => {
    t.text('source_key_hash');
    t.timestamp('source_window_ends', { useTz: true });
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('sso_sign_ins', (t) => {
    t.dropColumn('source_key_hash');
    t.dropColumn('source_window_ends');
  });
}
