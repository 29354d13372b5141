import type { Knex } from 'knex';

// Requests change rows only; one reconciler applies them to the cluster and
// records here how far it got, so the API can show it. `pending`: committed,
// not yet applied; `applied`; `failed`, with `cluster_reason` (a code) and
// `cluster_message` saying why;
// `removed`: a deleted row whose resource is gone (a deleted row keeps its
// state until then). Rows written before start `pending`: the reconciler's
// first pass confirms them.

const TABLES = ['deployments', 'storage_configs'];

export async function up(knex: Knex): Promise<void> {
  for (const table of TABLES) {
    await knex.raw(`alter table ${table}
      add column cluster_state text not null default 'pending'
        constraint ${table}_cluster_state check (cluster_state in ('pending', 'applied', 'failed', 'removed')),
      add column cluster_reason text,
      add column cluster_message text`);
    // The reconciler reads every deleted row whose resource may still be there.
    await knex.raw(`create index ${table}_removal_pending on ${table} (id) where deleted_at is not null and cluster_state <> 'removed'`);
  }
}

export async function down(knex: Knex): Promise<void> {
  for (const table of TABLES) {
    await knex.raw(`drop index if exists ${table}_removal_pending`);
    await knex.raw(`alter table ${table} drop column cluster_message, drop column cluster_reason, drop column cluster_state`);
  }
}
