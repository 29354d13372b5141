import type { Knex } from 'knex';

// Guards of a traffic policy: thresholds a weighted candidate's outcomes are held to since the policy
// last changed; a background task sets a tripped candidate's weight to 0. The history row of that
// rollback says why (`reason`), since no person's request explains it.

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('alias_policies', (t) => {
    t.jsonb('guards').nullable();
  });
  await knex.schema.alterTable('model_alias_moves', (t) => {
    t.text('reason').nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('model_alias_moves', (t) => {
    t.dropColumn('reason');
  });
  await knex.schema.alterTable('alias_policies', (t) => {
    t.dropColumn('guards');
  });
}
