import type { Knex } from 'knex';

// Webhook endpoints of a workspace and the outbox of their deliveries
// (features/webhooks). A delivery of an invocation's outcome is written by a
// trigger on invocation_events (0016), so it commits or rolls back with the
// status change itself, whichever transition made it; a dataset's is written
// in the transaction that records the dataset. The deliverer sends them later,
// outside any of those transactions.

/** An ISO 8601 UTC timestamp to the millisecond, as JavaScript prints one. */
const iso = (column: string) => `to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/** The statuses whose events make deliveries, as SQL. */
const FINISHED = `'COMPLETED', 'ERROR', 'CANCELLED'`;

/**
 * The trigger function that queues the deliveries of invocation events; only
 * workspaces with an enabled endpoint pay for more than one index probe per
 * finished invocation.
 */
const webhookEventsFunction = (guard = '') => `
    create or replace function didyma_webhook_invocation_events() returns trigger language plpgsql as $$
    begin${guard}
      with finished as (
        select e.invocation_id, e.created_at,
               case e.status when 'COMPLETED' then 'invocation.completed' when 'ERROR' then 'invocation.failed' else 'invocation.cancelled' end as event_type
          from new_rows e
         where e.status in (${FINISHED})
           and exists (select 1 from webhook_endpoints ep where ep.workspace_id = e.workspace_id and ep.enabled)
      ),
      subject as (
        select f.event_type, i.workspace_id, i.callback_endpoint_id, i.callback_url,
               jsonb_build_object(
                 'type', f.event_type,
                 'timestamp', ${iso('f.created_at')},
                 'data', jsonb_build_object(
                   'workspace', w.name, 'invocation_id', i.id, 'session_id', i.session_id,
                   'model_code', m.model_code, 'model_version', m.version, 'type', i.type, 'order', i."order",
                   'status', i.status, 'error', i.error,
                   'created_at', ${iso('i.created_at')}, 'completed_at', ${iso('i.completed_at')}))::text as payload
          from finished f
          join invocations i on i.id = f.invocation_id
          join models m on m.id = i.model_id
          join workspaces w on w.id = i.workspace_id
         where i.type <> 'DATA_SUBMISSION'
      ),
      targets as (
        select s.workspace_id, ep.id as endpoint_id, null::text as url, s.event_type, s.payload
          from subject s join webhook_endpoints ep on ep.workspace_id = s.workspace_id and ep.enabled and ep.events @> jsonb_build_array(s.event_type)
        union
        select s.workspace_id, ep.id, nullif(s.callback_url, ep.url), s.event_type, s.payload
          from subject s join webhook_endpoints ep on ep.id = s.callback_endpoint_id and ep.workspace_id = s.workspace_id and ep.enabled
      )
      insert into webhook_deliveries (workspace_id, endpoint_id, url, event_type, payload)
        select workspace_id, endpoint_id, url, event_type, payload from targets;
      return null;
    end $$`;

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('webhook_endpoints', (t) => {
    t.increments('id');
    t.integer('workspace_id').notNullable().references('workspaces.id').onDelete('CASCADE');
    t.text('url').notNullable();
    t.text('description').notNullable().defaultTo('');
    // The event types it receives, a JSON array of strings.
    t.jsonb('events').notNullable();
    // `whsec_…`, sealed by the platform's SecretBox.
    t.text('secret_sealed').notNullable();
    t.boolean('enabled').notNullable().defaultTo(true);
    t.integer('created_by_id').references('users.id').onDelete('SET NULL');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  await knex.raw('create index webhook_endpoints_page on webhook_endpoints (workspace_id, created_at desc, id desc)');

  await knex.schema.createTable('webhook_deliveries', (t) => {
    // Sent as `webhook-id`: the same for every attempt and every redelivery.
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.integer('workspace_id').notNullable().references('workspaces.id').onDelete('CASCADE');
    t.integer('endpoint_id').notNullable().references('webhook_endpoints.id').onDelete('CASCADE');
    // An invocation's callback_url; null: the endpoint's own URL.
    t.text('url');
    t.text('event_type').notNullable();
    // The body as sent and signed, byte for byte, every time.
    t.text('payload').notNullable();
    t.text('status').notNullable().defaultTo('pending');
    // Attempts ever made: each claim takes the next number, and its result is written under it.
    t.integer('attempts').notNullable().defaultTo(0);
    // `attempts` when it was last queued (created or redelivered): the backoff schedule counts from there.
    t.integer('queued_at_attempt').notNullable().defaultTo(0);
    t.timestamp('next_attempt_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    // Set by a claim; a deliverer that died frees it when it runs out.
    t.timestamp('lease_expires_at', { useTz: true });
    t.integer('last_status_code');
    t.text('last_error');
    t.timestamp('delivered_at', { useTz: true });
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  await knex.raw(`alter table webhook_deliveries add constraint webhook_deliveries_status_check check (status in ('pending', 'delivered', 'failed'))`);
  await knex.raw(`create index webhook_deliveries_due on webhook_deliveries (next_attempt_at) where status = 'pending'`);
  await knex.raw('create index webhook_deliveries_page on webhook_deliveries (endpoint_id, created_at desc, id desc)');
  await knex.raw('create index webhook_deliveries_created on webhook_deliveries (created_at)');
  // The attempts in flight per endpoint, which a claim counts: only rows being sent.
  await knex.raw('create index webhook_deliveries_leased on webhook_deliveries (endpoint_id) where lease_expires_at is not null');

  await knex.schema.createTable('webhook_attempts', (t) => {
    t.uuid('delivery_id').notNullable().references('webhook_deliveries.id').onDelete('CASCADE');
    t.integer('attempt').notNullable();
    t.timestamp('started_at', { useTz: true }).notNullable();
    t.integer('duration_ms').notNullable();
    t.integer('status_code');
    t.text('error');
    t.text('response');
    t.primary(['delivery_id', 'attempt']);
  });

  await knex.schema.alterTable('invocations', (t) => {
    // A per-invocation callback, allowed by (and signed with the secret of) one endpoint of the workspace.
    t.integer('callback_endpoint_id').references('webhook_endpoints.id').onDelete('SET NULL');
    t.text('callback_url');
  });

  await knex.raw(webhookEventsFunction());
  await knex.raw(
    'create trigger invocation_events_webhooks after insert on invocation_events referencing new table as new_rows for each statement execute function didyma_webhook_invocation_events()',
  );
  await knex.raw(`
    create or replace function didyma_webhook_delivery_queued() returns trigger language plpgsql as $$
    begin
      if exists (select 1 from new_rows) then perform pg_notify('didyma_changes', 'webhook_deliveries'); end if;
      return null;
    end $$`);
  // Every queued delivery wakes the deliverers after its commit; their poll is only the fallback.
  await knex.raw(
    'create trigger webhook_deliveries_queued after insert on webhook_deliveries referencing new table as new_rows for each statement execute function didyma_webhook_delivery_queued()',
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop trigger if exists webhook_deliveries_queued on webhook_deliveries');
  await knex.raw('drop trigger if exists invocation_events_webhooks on invocation_events');
  await knex.raw('drop function if exists didyma_webhook_delivery_queued()');
  await knex.raw('drop function if exists didyma_webhook_invocation_events()');
  await knex.schema.alterTable('invocations', (t) => {
    t.dropColumn('callback_url');
    t.dropColumn('callback_endpoint_id');
  });
  await knex.schema.dropTableIfExists('webhook_attempts');
  await knex.schema.dropTableIfExists('webhook_deliveries');
  await knex.schema.dropTableIfExists('webhook_endpoints');
}
