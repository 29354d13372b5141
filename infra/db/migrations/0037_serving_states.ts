import type { Knex } from 'knex';

// What the private server last saw of each KServe InferenceService of the namespaces opened to
// workspaces (platform/kube/serving-states.ts), per component: the public server, which has no
// Kubernetes access, shows it on a model's page. Rewritten from the cluster, so no history is kept.

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('serving_states', (t) => {
    t.text('namespace').notNullable();
    t.text('name').notNullable();
    t.json('components').notNullable();
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.primary(['namespace', 'name']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('serving_states');
}
