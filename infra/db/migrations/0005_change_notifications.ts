import type { Knex } from 'knex';

// Every write to the tables that request-path caches copy (who a token's
// subject is, which models are live) announces itself on one channel after
// commit, whichever process or tool made it. See infra/db/change-feed.ts.

const ANNOUNCED_TABLES = ['users', 'workspaces', 'memberships', 'models'];

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create or replace function didyma_announce_change() returns trigger language plpgsql as $$
    begin
      perform pg_notify('didyma_changes', TG_TABLE_NAME);
      return null;
    end $$`);
  for (const table of ANNOUNCED_TABLES) {
    await knex.raw(`create trigger ${table}_announce_change after insert or update or delete or truncate on ${table} for each statement execute function didyma_announce_change()`);
  }
}

export async function down(knex: Knex): Promise<void> {
  for (const table of ANNOUNCED_TABLES) await knex.raw(`drop trigger if exists ${table}_announce_change on ${table}`);
  await knex.raw('drop function if exists didyma_announce_change()');
}
