import type { Knex } from 'knex';

// The W3C traceparent of the request that queued an invocation (or of the run
// that queued an explanation), kept with the row in the same insert: the run,
// whichever executor claims it and however much later, continues that trace.

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('invocations', (t) => t.text('traceparent'));
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('invocations', (t) => t.dropColumn('traceparent'));
}
