import type { Knex } from 'knex';

// Every status an invocation takes, for the session event stream
// (GET …/session/{id}/events). Triggers write them in the statement that
// changes the status, whichever transition it is, so no change is left out,
// and announce them on the change channel after the commit. Each event keeps
// its transaction id: a reader asks for what became visible since its last
// snapshot, which has no gap even when transactions commit out of id order.

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('invocation_events', (t) => {
    t.bigIncrements('id');
    t.integer('workspace_id').notNullable().references('workspaces.id').onDelete('CASCADE');
    t.uuid('session_id').notNullable();
    t.uuid('invocation_id').notNullable();
    t.text('status').notNullable();
    t.specificType('tx', 'xid8').notNullable().defaultTo(knex.raw('pg_current_xact_id()'));
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  await knex.raw('create index invocation_events_session on invocation_events (session_id, tx)');
  await knex.raw('create index invocation_events_created on invocation_events (created_at)');
  // Transition tables: one insert per statement, however many rows it moves (claims and completions are batched).
  await knex.raw(`
    create or replace function didyma_invocation_appended() returns trigger language plpgsql as $$
    begin
      insert into invocation_events (workspace_id, session_id, invocation_id, status)
        select n.workspace_id, n.session_id, n.id, n.status from new_rows n order by n."order";
      perform pg_notify('didyma_changes', 'invocations');
      return null;
    end $$`);
  await knex.raw(`
    create or replace function didyma_invocation_moved() returns trigger language plpgsql as $$
    begin
      insert into invocation_events (workspace_id, session_id, invocation_id, status)
        select n.workspace_id, n.session_id, n.id, n.status from new_rows n join old_rows o on o.id = n.id
         where o.status is distinct from n.status order by n."order";
      if found then perform pg_notify('didyma_changes', 'invocations'); end if;
      return null;
    end $$`);
  await knex.raw('create trigger invocations_appended after insert on invocations referencing new table as new_rows for each statement execute function didyma_invocation_appended()');
  await knex.raw('create trigger invocations_moved after update on invocations referencing old table as old_rows new table as new_rows for each statement execute function didyma_invocation_moved()');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop trigger if exists invocations_moved on invocations');
  await knex.raw('drop trigger if exists invocations_appended on invocations');
  await knex.raw('drop function if exists didyma_invocation_moved()');
  await knex.raw('drop function if exists didyma_invocation_appended()');
  await knex.schema.dropTableIfExists('invocation_events');
}
