import type { Runner } from '../../infra/db/database.js';
import { webhookDeliveriesStore, type NewDelivery } from './deliveries.store.js';
import { invocationOutcomePayload, OUTCOME_EVENTS, type InvocationOutcome } from './payloads.js';
import type { WebhookEvent } from './endpoints.store.js';

/** A finished invocation whose workspace has enabled endpoints: what its event tells, and where it may go. */
interface RoutedOutcome extends InvocationOutcome {
  workspace_id: number;
  callback_endpoint_id: number | null;
  callback_url: string | null;
  endpoints: Array<{ id: number; url: string; events: WebhookEvent[] }>;
}

/**
 * The finished PREDICT and EXPLAIN invocations among `ids`, shadow invocations
 * left out (they are never the caller's to hear of), whose workspace
 * has an enabled endpoint, with those endpoints: a workspace without one
 * costs an index probe per invocation.
 */
const ROUTED_SQL = `
select i.id as invocation_id, i.session_id, i.workspace_id, w.name as workspace, m.model_code, m.version as model_version,
       i.type, i."order", i.status, i.error, i.created_at, i.completed_at, i.callback_endpoint_id, i.callback_url,
       (select json_agg(json_build_object('id', ep.id, 'url', ep.url, 'events', ep.events) order by ep.id)
          from webhook_endpoints ep where ep.workspace_id = i.workspace_id and ep.enabled) as endpoints
  from invocations i
  join models m on m.id = i.model_id
  join workspaces w on w.id = i.workspace_id
 where i.id = any(array(select jsonb_array_elements_text(?::jsonb)::uuid))
   and i.type <> 'DATA_SUBMISSION' and i.status in ('COMPLETED', 'ERROR', 'CANCELLED') and i.shadow_of is null
   and exists (select 1 from webhook_endpoints ep where ep.workspace_id = i.workspace_id and ep.enabled)`;

/**
 * The deliveries of one outcome: one to each enabled endpoint that asked for
 * its event, and one to the invocation's callback, signed by the endpoint
 * that allowed it (to that endpoint's own URL when the callback is it: then
 * it is one delivery, not two).
 */
export function routeOutcome(outcome: RoutedOutcome): NewDelivery[] {
  const event = OUTCOME_EVENTS[outcome.status];
  const payload = invocationOutcomePayload(outcome);
  const deliveries = new Map<string, NewDelivery>();
  const add = (endpointId: number, url: string | null) => deliveries.set(`${endpointId} ${url}`, { workspace_id: outcome.workspace_id, endpoint_id: endpointId, url, event_type: event, payload });
  for (const endpoint of outcome.endpoints) if (endpoint.events.includes(event)) add(endpoint.id, null);
  const callbackEndpoint = outcome.endpoints.find((endpoint) => endpoint.id === outcome.callback_endpoint_id);
  if (callbackEndpoint) add(callbackEndpoint.id, outcome.callback_url === callbackEndpoint.url ? null : outcome.callback_url);
  return [...deliveries.values()];
}

/**
 * The webhook step of every final transition (complete, fail, abandon,
 * cancel): queues the deliveries of the invocations `ids` that just finished,
 * in the transition's transaction `trx`, so they commit or roll back with it.
 */
export async function queueOutcomeDeliveries(trx: Runner, ids: readonly string[]): Promise<void> {
  if (!ids.length) return;
  const routed = ((await trx.raw(ROUTED_SQL, [JSON.stringify(ids)])) as { rows: RoutedOutcome[] }).rows;
  if (!routed.length) return;
  await webhookDeliveriesStore.insert(trx, routed.flatMap((outcome) => routeOutcome({ ...outcome, created_at: new Date(outcome.created_at), completed_at: new Date(outcome.completed_at) })));
}
