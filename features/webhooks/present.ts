import type { AttemptRow, DeliveryRow } from './deliveries.store.js';
import type { EndpointRow } from './endpoints.store.js';

// Rows → the shapes the API documents. The endpoint's secret never passes through here.

const iso = (date: Date | null) => (date ? new Date(date).toISOString() : null);

export const presentEndpoint = (row: EndpointRow, workspace: string) => ({
  id: row.id,
  url: row.url,
  description: row.description,
  events: row.events,
  enabled: row.enabled,
  workspace,
  created_at: iso(row.created_at),
  updated_at: iso(row.updated_at),
});

export const presentAttempt = (row: AttemptRow) => ({
  attempt: row.attempt,
  started_at: iso(row.started_at),
  duration_ms: row.duration_ms,
  status_code: row.status_code,
  error: row.error,
  response: row.response,
});

export function presentDelivery(row: DeliveryRow, endpointUrl: string, attempts: AttemptRow[]) {
  return {
    id: row.id,
    endpoint_id: row.endpoint_id,
    event_type: row.event_type,
    url: row.url ?? endpointUrl,
    status: row.status,
    attempt_count: row.attempts,
    next_attempt_at: row.status === 'pending' ? iso(row.next_attempt_at) : null,
    last_status_code: row.last_status_code,
    last_error: row.last_error,
    delivered_at: iso(row.delivered_at),
    created_at: iso(row.created_at),
    payload: JSON.parse(row.payload) as unknown,
    attempts: attempts.map(presentAttempt),
  };
}
