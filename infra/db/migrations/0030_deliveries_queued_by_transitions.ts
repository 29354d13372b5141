import type { Knex } from 'knex';

// Webhook deliveries of an invocation's outcome are queued by the final
// transitions of features/invocations/state.ts in their own transaction,
// their payloads built in features/webhooks/payloads.ts, and the deliverers
// told after the commit (announceCommitted), not by a NOTIFY inside it. The
// triggers of 0017 and 0024 go; `down` puts them back as 0024 left them.

const INVOCATION_EVENTS_FUNCTION = `
    create or replace function didyma_webhook_invocation_events() returns trigger language plpgsql as $$
    begin
      if not exists (
        select 1 from new_rows e join webhook_endpoints ep on ep.workspace_id = e.workspace_id and ep.enabled
         where e.status in ('COMPLETED', 'ERROR', 'CANCELLED')
      ) then
        return null;
      end if;
      with finished as (
        select e.invocation_id, e.created_at,
               case e.status when 'COMPLETED' then 'invocation.completed' when 'ERROR' then 'invocation.failed' else 'invocation.cancelled' end as event_type
          from new_rows e
         where e.status in ('COMPLETED', 'ERROR', 'CANCELLED')
           and exists (select 1 from webhook_endpoints ep where ep.workspace_id = e.workspace_id and ep.enabled)
      ),
      subject as (
        select f.event_type, i.workspace_id, i.callback_endpoint_id, i.callback_url,
               jsonb_build_object(
                 'type', f.event_type,
                 'timestamp', to_char(f.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
                 'data', jsonb_build_object(
                   'workspace', w.name, 'invocation_id', i.id, 'session_id', i.session_id,
                   'model_code', m.model_code, 'model_version', m.version, 'type', i.type, 'order', i."order",
                   'status', i.status, 'error', i.error,
                   'created_at', to_char(i.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), 'completed_at', to_char(i.completed_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')))::text as payload
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

const DELIVERY_QUEUED_FUNCTION = `
    create or replace function didyma_webhook_delivery_queued() returns trigger language plpgsql as $$
    begin
      if exists (select 1 from new_rows) then perform pg_notify('didyma_changes', 'webhook_deliveries'); end if;
      return null;
    end $$`;

export async function up(knex: Knex): Promise<void> {
  await knex.raw('drop trigger if exists webhook_deliveries_queued on webhook_deliveries');
  await knex.raw('drop trigger if exists invocation_events_webhooks on invocation_events');
  await knex.raw('drop function if exists didyma_webhook_delivery_queued()');
  await knex.raw('drop function if exists didyma_webhook_invocation_events()');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(INVOCATION_EVENTS_FUNCTION);
  await knex.raw(
    'create trigger invocation_events_webhooks after insert on invocation_events referencing new table as new_rows for each statement execute function didyma_webhook_invocation_events()',
  );
  await knex.raw(DELIVERY_QUEUED_FUNCTION);
  await knex.raw(
    'create trigger webhook_deliveries_queued after insert on webhook_deliveries referencing new table as new_rows for each statement execute function didyma_webhook_delivery_queued()',
  );
}
