import type { Knex } from 'knex';

// A sign-in under way (a browser's or a device's) remembers the window it was counted in for its source
// (features/identity/sso/starts.ts), so that finishing it takes the count back:
// a source is held to the sign-ins it left unfinished, not to those it made.

const TABLES = ['sso_sign_ins', 'sso_device_sign_ins'];

export async function up(knex: Knex): Promise<void> {
  for (const table of TABLES) {
    await knex.schema.alterTable(table, (t) => {
      t.text('source_key_hash');
      t.timestamp('source_window_ends', { useTz: true });
    });
  }
}

export async function down(knex: Knex): Promise<void> {
  for (const table of TABLES) {
    await knex.schema.alterTable(table, (t) => {
      t.dropColumn('source_key_hash');
      t.dropColumn('source_window_ends');
    });
  }
}
