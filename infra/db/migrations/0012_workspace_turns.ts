import type { Knex } from 'knex';

// When a workspace last had an invocation claimed. Among workspaces of equal
// share the one served least recently goes first: otherwise a workspace that
// just started sending would lose every tie to the older backlogs of others.

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('workspaces', (t) => {
    t.timestamp('last_claimed_at', { useTz: true });
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('workspaces', (t) => t.dropColumn('last_claimed_at'));
}
