import type { Knex } from 'knex';

// Shadow invocations (issue 62): a prediction in a session opened through an alias whose policy
// has shadow versions is queued again on each of them, in a hidden session of its own per
// (session, shadow version), so that the session-order invariants hold for both. A shadow session
// names its primary session (`sessions.shadow_of`); the primary knows it has some
// (`sessions.shadowed`, read by the append itself); a shadow invocation names its primary
// invocation (`invocations.shadow_of`), the link a comparison joins on.

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('sessions', (t) => {
    t.uuid('shadow_of').nullable().references('sessions.id').onDelete('CASCADE');
    t.boolean('shadowed').notNullable().defaultTo(false);
  });
  await knex.raw('create index sessions_shadows on sessions (shadow_of) where shadow_of is not null');
  await knex.schema.alterTable('invocations', (t) => {
    t.uuid('shadow_of').nullable().references('invocations.id').onDelete('CASCADE');
  });
  await knex.raw('create index invocations_shadows on invocations (shadow_of) where shadow_of is not null');
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('invocations', (t) => t.dropColumn('shadow_of'));
  await knex.schema.alterTable('sessions', (t) => {
    t.dropColumn('shadowed');
    t.dropColumn('shadow_of');
  });
}
