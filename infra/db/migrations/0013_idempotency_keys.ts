import type { Knex } from 'knex';

// Idempotency keys of the POSTs that create work (features/idempotency): the
// first request with a key claims its row, later ones with the same key get
// its stored answer. Kept here, not in a process, so every replica and a
// restarted one answer the same.

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('idempotency_keys', (t) => {
    t.integer('workspace_id').notNullable().references('id').inTable('workspaces').onDelete('CASCADE');
    // `user-<id>` or `api-token-<id>`: one user's keys are not another's, nor one token's another's.
    t.text('principal').notNullable();
    // The operation (`createInvocation`), so one key may serve two different POSTs.
    t.text('operation').notNullable();
    t.text('key').notNullable();
    // SHA-256 of method, path and canonical body: the same key with another request is a 422.
    t.text('request_hash').notNullable();
    t.text('state').notNullable();
    // Who holds an in-flight claim, and until when unless renewed: a process that died frees it then.
    t.uuid('holder');
    t.timestamp('locked_until', { useTz: true });
    t.integer('response_status');
    // The JSON text as first sent, replayed byte for byte.
    t.text('response_body');
    t.timestamp('created_at', { useTz: true }).notNullable();
    t.timestamp('expires_at', { useTz: true }).notNullable();
    t.primary(['workspace_id', 'principal', 'operation', 'key']);
    t.index(['expires_at']);
  });
  await knex.raw(`alter table idempotency_keys add constraint idempotency_keys_state check (state in ('in_flight', 'done'))`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('idempotency_keys');
}
