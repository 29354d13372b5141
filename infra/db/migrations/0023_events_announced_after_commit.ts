import type { Knex } from 'knex';

// The invocation triggers keep writing every status into `invocation_events`,
// but no longer NOTIFY: the one writer of invocation state announces the
// change after its commit (infra/db/change-feed.ts, announceCommitted). A
// NOTIFY inside a transaction takes PostgreSQL's database-wide notification
// lock from before its commit until after, so each append, claim and
// completion committed only after the one before it had (docs/decisions.md).

const APPENDED = (announce: string) => `
  create or replace function didyma_invocation_appended() returns trigger language plpgsql as $$
  begin
    insert into invocation_events (workspace_id, session_id, invocation_id, status)
      select n.workspace_id, n.session_id, n.id, n.status from new_rows n order by n."order";
    ${announce}
    return null;
  end $$`;

const MOVED = (announce: string) => `
  create or replace function didyma_invocation_moved() returns trigger language plpgsql as $$
  begin
    insert into invocation_events (workspace_id, session_id, invocation_id, status)
      select n.workspace_id, n.session_id, n.id, n.status from new_rows n join old_rows o on o.id = n.id
       where o.status is distinct from n.status order by n."order";
    ${announce}
    return null;
  end $$`;

export async function up(knex: Knex): Promise<void> {
  await knex.raw(APPENDED(''));
  await knex.raw(MOVED(''));
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(APPENDED(`perform pg_notify('didyma_changes', 'invocations');`));
  await knex.raw(MOVED(`if found then perform pg_notify('didyma_changes', 'invocations'); end if;`));
}
