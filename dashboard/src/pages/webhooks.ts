import { at } from '../context.js';
import { html, type Html } from '../web/html.js';
import { badge, checkbox, csrfField, dataTable, postButton, secretOnce, textField, timeText } from './components.js';

export const WEBHOOK_EVENT_CHOICES = ['invocation.completed', 'invocation.failed', 'invocation.cancelled', 'dataset.exported'] as const;

export interface EndpointItem {
  id: number;
  url: string;
  description: string;
  events: string[];
  enabled: boolean;
  created_at: string | null;
}

export interface DeliveryItem {
  id: string;
  event_type: string;
  url: string;
  status: 'pending' | 'delivered' | 'failed';
  attempt_count: number;
  next_attempt_at: string | null;
  last_status_code: number | null;
  last_error: string | null;
  created_at: string | null;
  attempts: Array<{ attempt: number; started_at: string | null; duration_ms: number; status_code: number | null; error: string | null; response: string | null }>;
}

export interface WebhooksPage {
  csrfToken: string;
  endpoints: EndpointItem[];
  created?: { url: string; secret: string };
  draft?: { url: string; description: string; events: string[] };
}

export interface DeliveriesPage {
  csrfToken: string;
  endpoint: EndpointItem;
  deliveries: DeliveryItem[];
  total: number;
}

const base = (id: number) => at(`/webhooks/${id}`);

export function webhooksBody(page: WebhooksPage): Html {
  const events = page.draft?.events ?? WEBHOOK_EVENT_CHOICES.slice(0, 3);
  return html`${page.created ? createdSecret(page.created) : ''}
<section aria-labelledby="create-webhook">
  <h2 id="create-webhook">Register a webhook endpoint</h2>
  <form class="card" method="post" action="${at('/webhooks')}">
    ${csrfField(page.csrfToken)}
    ${textField({ name: 'url', label: 'URL', value: page.draft?.url, required: true, maxlength: 2048, hint: 'Receives a signed POST (Standard Webhooks) for each event; callback URLs of invocations must share its origin and sit at or below its path.' })}
    ${textField({ name: 'description', label: 'Description', value: page.draft?.description, maxlength: 500 })}
    <fieldset><legend>Events</legend>
      ${WEBHOOK_EVENT_CHOICES.map((event) => checkbox({ name: `event:${event}`, label: event, checked: events.includes(event) }))}
    </fieldset>
    <button type="submit" class="button primary">Register endpoint</button>
  </form>
</section>
<section aria-labelledby="webhook-list">
  <h2 id="webhook-list">Endpoints of this workspace</h2>
  ${dataTable({
    caption: 'Webhook endpoints',
    headers: ['URL', 'Events', 'Status', 'Created', 'Actions'],
    rows: page.endpoints.map((endpoint) => [
      html`<a href="${base(endpoint.id)}">${endpoint.url}</a>${endpoint.description ? html`<br><span class="muted">${endpoint.description}</span>` : ''}`,
      endpoint.events.join(', '),
      endpoint.enabled ? badge('enabled', 'ok') : badge('disabled', 'off'),
      timeText(endpoint.created_at),
      endpointActions(endpoint, page.csrfToken),
    ]),
    empty: 'No webhook endpoints yet.',
  })}
</section>`;
}

function createdSecret(created: { url: string; secret: string }): Html {
  return html`<section class="card highlight" aria-labelledby="new-webhook">
  <h2 id="new-webhook">Endpoint ${created.url} registered</h2>
  <p><strong>Copy the signing secret now: it is shown only once.</strong> The receiver checks each <code>webhook-signature</code> with it.</p>
  ${secretOnce({ id: 'new-webhook-secret', label: 'Signing secret', value: created.secret })}
</section>`;
}

function endpointActions(endpoint: EndpointItem, csrf: string): Html {
  return html`<div class="actions">
  ${postButton({ action: `${base(endpoint.id)}/enabled`, csrf, label: endpoint.enabled ? 'Disable' : 'Enable', fields: { enabled: String(!endpoint.enabled) }, accessibleLabel: `${endpoint.enabled ? 'Disable' : 'Enable'} endpoint ${endpoint.url}` })}
  ${postButton({ action: `${base(endpoint.id)}/rotate`, csrf, label: 'Rotate secret', confirm: `Replace the secret of ${endpoint.url}? Its receiver must switch to the new one.`, accessibleLabel: `Rotate the secret of ${endpoint.url}` })}
  ${postButton({ action: `${base(endpoint.id)}/delete`, csrf, label: 'Delete', variant: 'danger', confirm: `Delete ${endpoint.url} and its deliveries for good?`, accessibleLabel: `Delete endpoint ${endpoint.url}` })}
</div>`;
}

export function deliveriesBody(page: DeliveriesPage): Html {
  return html`<p><a href="${at('/webhooks')}">All endpoints</a></p>
<section aria-labelledby="deliveries">
  <h2 id="deliveries">Deliveries to ${page.endpoint.url}</h2>
  <p class="muted">${String(page.total)} in all, newest first${page.total > page.deliveries.length ? html`; the latest ${String(page.deliveries.length)} are shown` : ''}.</p>
  ${dataTable({
    caption: 'Webhook deliveries',
    headers: ['Webhook id', 'Event', 'Status', 'Attempts', 'Last answer', 'Created', 'Actions'],
    rows: page.deliveries.map((delivery) => [
      html`<code>${delivery.id}</code>${delivery.url === page.endpoint.url ? '' : html`<br><span class="muted">${delivery.url}</span>`}`,
      delivery.event_type,
      statusBadge(delivery),
      attemptsOf(delivery),
      delivery.last_status_code === null ? html`<span class="muted">${delivery.last_error ?? 'none yet'}</span>` : html`HTTP ${String(delivery.last_status_code)}`,
      timeText(delivery.created_at),
      delivery.status === 'pending' && delivery.attempt_count === 0
        ? ''
        : postButton({ action: `${base(page.endpoint.id)}/deliveries/${delivery.id}/redeliver`, csrf: page.csrfToken, label: 'Redeliver', accessibleLabel: `Redeliver ${delivery.id}` }),
    ]),
    empty: 'Nothing delivered to this endpoint yet.',
  })}
</section>`;
}

function statusBadge(delivery: DeliveryItem): Html {
  if (delivery.status === 'delivered') return badge('delivered', 'ok');
  if (delivery.status === 'failed') return badge('failed', 'off');
  return html`${badge('pending')} ${delivery.next_attempt_at ? html`<span class="muted">next ${timeText(delivery.next_attempt_at)}</span>` : ''}`;
}

function attemptsOf(delivery: DeliveryItem): Html {
  if (!delivery.attempts.length) return html`<span class="muted">none yet</span>`;
  return html`<details><summary>${String(delivery.attempts.length)}</summary><ol>${delivery.attempts.map(
    (attempt) =>
      html`<li>${timeText(attempt.started_at)}, ${String(attempt.duration_ms)} ms: ${attempt.status_code === null ? '' : `HTTP ${attempt.status_code}`}${attempt.error ? html` <span class="problem">${attempt.error}</span>` : ''}${attempt.response ? html` <code>${attempt.response}</code>` : ''}</li>`,
  )}</ol></details>`;
}
