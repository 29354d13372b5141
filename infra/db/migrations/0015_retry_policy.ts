import type { Knex } from 'knex';

// A model's retry policy, and every attempt of an invocation kept: who ran it,
// when, and how it ended, so a user sees why a run was retried or gave up.

export async function up(knex: Knex): Promise<void> {
  // Null: registered before policies existed, the default policy applies.
  await knex.schema.alterTable('models', (t) => t.jsonb('retry_policy'));
  // A re-run's retry budget counts from the attempts made before it.
  await knex.schema.alterTable('invocations', (t) => t.integer('rerun_attempts').notNullable().defaultTo(0));
  await knex.schema.createTable('invocation_attempts', (t) => {
    t.uuid('invocation_id').notNullable().references('invocations.id').onDelete('CASCADE');
    t.integer('attempt').notNullable();
    t.text('executor').notNullable();
    t.timestamp('started_at', { useTz: true }).notNullable();
    t.timestamp('ended_at', { useTz: true });
    t.text('outcome');
    t.text('error');
    // The one index: an invocation's attempts in order, and the attempt a transition ends.
    t.primary(['invocation_id', 'attempt']);
  });
  await knex.raw(`alter table invocation_attempts add constraint invocation_attempts_outcome_check check (outcome in ('COMPLETED', 'ERROR', 'RETRY', 'CANCELLED', 'LOST'))`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('invocation_attempts');
  await knex.schema.alterTable('invocations', (t) => t.dropColumn('rerun_attempts'));
  await knex.schema.alterTable('models', (t) => t.dropColumn('retry_policy'));
}
