import type { Knex } from 'knex';
import { isEmbedded } from '../embedded.js';

// The keyset of every list endpoint (infra/db/keyset.ts): each index holds a
// list's tenant columns and then its order, newest first, so a page at any
// depth is one index range read and the list's count an index-only scan.
// Built concurrently, outside a transaction, as in 0007: a plain build would
// hold back the writes of a large invocations table while it reads it.

export const config = { transaction: false };

const INDEXES: Record<string, string> = {
  models_list: `models (workspace_id, created_at desc, id desc) where deleted_at is null`,
  sessions_list: `sessions (workspace_id, model_id, user_id, created_at desc, id desc)`,
  invocations_list: `invocations (workspace_id, session_id, created_at desc, id desc)`,
  invocations_feedback_list: `invocations (workspace_id, session_id, created_at desc, id desc) where type = 'DATA_SUBMISSION'`,
  deployments_list: `deployments (workspace_id, created_at desc, id desc) where deleted_at is null`,
  storage_configs_list: `storage_configs (workspace_id, created_at desc, id desc) where deleted_at is null`,
  workspaces_list: `workspaces (created_at desc, id desc) where deleted_at is null`,
  api_tokens_list: `api_tokens (workspace_id, created desc, id desc)`,
  invitations_list: `invitations (workspace_id, created_at desc, id desc)`,
};

const concurrently = (knex: Knex) => (isEmbedded(knex) ? '' : 'concurrently');

export async function up(knex: Knex): Promise<void> {
  for (const [name, definition] of Object.entries(INDEXES)) {
    await knex.raw(`drop index ${concurrently(knex)} if exists ${name}`);
    await knex.raw(`create index ${concurrently(knex)} ${name} on ${definition}`);
  }
}

export async function down(knex: Knex): Promise<void> {
  for (const name of Object.keys(INDEXES)) await knex.raw(`drop index ${concurrently(knex)} if exists ${name}`);
}
