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

export interface WebhooksPage {
  csrfToken: string;
  endpoints: EndpointItem[];
  created?: { url: string; secret: string };
  draft?: { url: string; description: string; events: string[] };
}

export const endpointPath = (id: number) => at(`/webhooks/${id}`);

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
      html`<a href="${endpointPath(endpoint.id)}">${endpoint.url}</a>${endpoint.description ? html`<br><span class="muted">${endpoint.description}</span>` : ''}`,
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
  ${postButton({ action: `${endpointPath(endpoint.id)}/enabled`, csrf, label: endpoint.enabled ? 'Disable' : 'Enable', fields: { enabled: String(!endpoint.enabled) }, accessibleLabel: `${endpoint.enabled ? 'Disable' : 'Enable'} endpoint ${endpoint.url}` })}
  ${postButton({ action: `${endpointPath(endpoint.id)}/rotate`, csrf, label: 'Rotate secret', confirm: `Replace the secret of ${endpoint.url}? Its receiver must switch to the new one.`, accessibleLabel: `Rotate the secret of ${endpoint.url}` })}
  ${postButton({ action: `${endpointPath(endpoint.id)}/delete`, csrf, label: 'Delete', variant: 'danger', confirm: `Delete ${endpoint.url} and its deliveries for good?`, accessibleLabel: `Delete endpoint ${endpoint.url}` })}
</div>`;
}
