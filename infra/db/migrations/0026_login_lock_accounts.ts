import type { Knex } from 'knex';

// Login failures are counted per (account, source) as well as per account
// (features/auth/login-guard.ts). Each of an account's windows carries the
// account key's SHA-256, so staff can read and lift every lock of the account
// they name without any e-mail, client id or address being stored in clear.

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('rate_limit_windows', (t) => {
    t.text('account_hash');
    t.index(['account_hash']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('rate_limit_windows', (t) => {
    t.dropIndex(['account_hash']);
    t.dropColumn('account_hash');
  });
}
