import type { Knex } from 'knex';

// A traffic policy of an alias: the weight of the alias's own version (`primary_weight`), the
// other versions with their weights, and shadow versions (stored, not yet dispatched). The
// primary is not a target row, so moving the alias moves the primary's weight with it. A policy
// change is a row of model_alias_moves like a move, with the policy before and after.

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('alias_policies', (t) => {
    t.integer('alias_id').primary().references('model_aliases.id').onDelete('CASCADE');
    t.text('sticky').notNullable();
    t.integer('primary_weight').notNullable();
    t.integer('updated_by_id').nullable().references('users.id').onDelete('SET NULL');
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  await knex.raw(`alter table alias_policies add constraint alias_policies_sticky_check check (sticky in ('session', 'user'))`);
  await knex.raw('alter table alias_policies add constraint alias_policies_primary_weight_check check (primary_weight between 0 and 100)');

  await knex.schema.createTable('alias_policy_targets', (t) => {
    t.integer('alias_id').notNullable().references('alias_policies.alias_id').onDelete('CASCADE');
    t.integer('model_id').notNullable().references('models.id');
    t.text('role').notNullable();
    t.integer('weight').nullable();
    t.primary(['alias_id', 'model_id']);
  });
  await knex.raw(`alter table alias_policy_targets add constraint alias_policy_targets_role_check check (
    (role = 'weighted' and weight between 0 and 100) or (role = 'shadow' and weight is null))`);
  await knex.raw('create index alias_policy_targets_model on alias_policy_targets (model_id)');

  await knex.schema.alterTable('model_alias_moves', (t) => {
    t.jsonb('from_policy').nullable();
    t.jsonb('to_policy').nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('model_alias_moves', (t) => {
    t.dropColumn('to_policy');
    t.dropColumn('from_policy');
  });
  await knex.schema.dropTable('alias_policy_targets');
  await knex.schema.dropTable('alias_policies');
}
