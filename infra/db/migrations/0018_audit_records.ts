import type { Knex } from 'knex';

// The audit trail: one row per state-changing or refused request. Rows are
// only ever inserted; a trigger refuses UPDATE and TRUNCATE, and the only
// DELETE is the retention purge (DIDYMA_AUDIT_RETENTION_DAYS). No foreign
// keys: a record outlives the user, token, workspace or resource it names.

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('audit_records', (t) => {
    t.uuid('id').primary();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.text('actor_type').notNullable();
    t.integer('actor_user_id');
    t.text('actor_id');
    t.integer('workspace_id');
    t.text('action').notNullable();
    t.text('method').notNullable();
    t.text('path').notNullable();
    t.text('resource_type');
    t.text('resource_id');
    t.integer('outcome').notNullable();
    t.text('request_id').notNullable();
    t.text('trace_id');
    t.text('source_address');
    t.integer('suppressed').notNullable().defaultTo(0);
  });
  await knex.raw('create index audit_records_page on audit_records (created_at desc, id desc)');
  await knex.raw('create index audit_records_workspace on audit_records (workspace_id, created_at desc, id desc)');
  await knex.raw(`
    create or replace function didyma_audit_append_only() returns trigger language plpgsql as $$
    begin
      raise exception 'audit records are append-only' using errcode = '42501';
    end $$`);
  await knex.raw('create trigger audit_records_no_update before update on audit_records for each statement execute function didyma_audit_append_only()');
  await knex.raw('create trigger audit_records_no_truncate before truncate on audit_records for each statement execute function didyma_audit_append_only()');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop trigger if exists audit_records_no_truncate on audit_records');
  await knex.raw('drop trigger if exists audit_records_no_update on audit_records');
  await knex.raw('drop function if exists didyma_audit_append_only()');
  await knex.schema.dropTableIfExists('audit_records');
}
