import type { DeliveryStatus } from '../../../features/webhooks/deliveries.store.js';
import { at } from '../context.js';
import { html, type Html } from '../web/html.js';
import { badge, dataTable, longCode, postButton, selectField, timeText, type Choice } from './components.js';
import { sessionLink } from './links.js';
import { endpointPath, type EndpointItem } from './webhooks.js';

export interface DeliveryItem {
  id: string;
  event_type: string;
  url: string;
  status: DeliveryStatus;
  attempt_count: number;
  next_attempt_at: string | null;
  last_status_code: number | null;
  last_error: string | null;
  created_at: string | null;
  /** The body as sent: an invocation's event names the invocation, its session and model. */
  payload: unknown;
  attempts: Array<{ attempt: number; started_at: string | null; duration_ms: number; status_code: number | null; error: string | null; response: string | null }>;
}

export interface DeliveriesPage {
  csrfToken: string;
  endpoint: EndpointItem;
  deliveries: DeliveryItem[];
  total: number;
  status?: DeliveryStatus;
  /** The cursor of the next (older) page, when there is one. */
  older?: string;
  /** This is a later page: offer the way back to the newest. */
  paged: boolean;
  /** The sessions named by these deliveries that are the viewer's own: only theirs link to a session's page. */
  ownSessions: ReadonlySet<string>;
}

/** How many deliveries a page shows. */
export const DELIVERIES_PER_PAGE = 20;

export const STATUS_CHOICES: Choice[] = [
  { value: '', label: 'Every status' },
  { value: 'pending', label: 'Pending' },
  { value: 'delivered', label: 'Delivered' },
  { value: 'failed', label: 'Failed' },
];

/** The endpoint's deliveries page with this status filter and cursor. */
export function deliveriesLink(endpointId: number, params: { status?: string; after?: string } = {}): string {
  const search = new URLSearchParams(Object.entries(params).filter((e): e is [string, string] => Boolean(e[1]))).toString();
  return `${endpointPath(endpointId)}${search ? `?${search}` : ''}`;
}

export function deliveriesBody(page: DeliveriesPage): Html {
  const { endpoint } = page;
  return html`<p><a href="${at('/webhooks')}">All endpoints</a></p>
<section aria-labelledby="deliveries">
  <h2 id="deliveries">Deliveries to ${endpoint.url}</h2>
  <form class="card row-form" method="get" action="${endpointPath(endpoint.id)}">
    ${selectField({ name: 'status', label: 'Status', choices: STATUS_CHOICES, value: page.status ?? '' })}
    <button type="submit" class="button primary">Show deliveries</button>
  </form>
  <p class="muted">${String(page.total)} ${page.status ? `${page.status} ` : ''}${page.total === 1 ? 'delivery' : 'deliveries'} in all, newest first, ${String(DELIVERIES_PER_PAGE)} a page.</p>
  ${dataTable({
    caption: 'Webhook deliveries',
    headers: ['Webhook id', 'Event', 'Status', 'Attempts', 'Last answer', 'Created', 'Actions'],
    rows: page.deliveries.map((delivery) => [
      html`${longCode(delivery.id)}${delivery.url === endpoint.url ? '' : html`<br><span class="muted wrap">${delivery.url}</span>`}`,
      html`${eventName(delivery.event_type)}${invocationLink(delivery.payload, page.ownSessions)}`,
      statusBadge(delivery),
      attemptsOf(delivery),
      delivery.last_status_code === null ? html`<span class="muted">${delivery.last_error ?? 'none yet'}</span>` : html`HTTP ${String(delivery.last_status_code)}`,
      timeText(delivery.created_at),
      delivery.status === 'pending' && delivery.attempt_count === 0
        ? ''
        : postButton({ action: `${endpointPath(endpoint.id)}/deliveries/${delivery.id}/redeliver`, csrf: page.csrfToken, label: 'Redeliver', accessibleLabel: `Redeliver ${delivery.id}` }),
    ]),
    empty: page.status ? `No ${page.status} deliveries to this endpoint.` : 'Nothing delivered to this endpoint yet.',
  })}
  ${pager(page)}
</section>`;
}

function pager(page: DeliveriesPage): Html {
  const { endpoint, status } = page;
  if (!page.paged && !page.older) return html``;
  return html`<p class="actions">
  ${page.paged ? html`<a class="button secondary" href="${deliveriesLink(endpoint.id, { status })}">Newest deliveries</a>` : ''}
  ${page.older ? html`<a class="button secondary" href="${deliveriesLink(endpoint.id, { status, after: page.older })}">Older deliveries</a>` : ''}
</p>`;
}

/** An event type that may break after its dots (`invocation.<wbr>completed`), never inside a word. */
const eventName = (type: string) => type.split('.').map((part, i) => (i === 0 ? html`${part}` : html`.<wbr>${part}`));

interface NamedInvocation {
  invocation_id: string;
  session_id: string;
  model_code: string;
  model_version: string;
  order?: number;
}

/**
 * The invocation an event names (its `data`): linked to its session's page
 * when that session is one of `ownSessions` (the only sessions the viewer can
 * open), else its id to copy; nothing for other events.
 */
export function invocationLink(payload: unknown, ownSessions: ReadonlySet<string>): Html {
  const named = namedInvocationOf(payload);
  if (!named) return html``;
  const label = typeof named.order === 'number' ? `Invocation #${String(named.order)}` : 'Invocation';
  if (!ownSessions.has(named.session_id)) return html`<br><span class="muted">${label}</span> ${longCode(named.invocation_id)}`;
  const href = `${sessionLink({ code: named.model_code, version: named.model_version }, named.session_id)}#invocation-${named.invocation_id}`;
  return html`<br><a href="${href}" aria-label="${label} of session ${named.session_id}">${label}</a>`;
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

/** The invocation an event's `data` names, when it names one whole. */
export function namedInvocationOf(payload: unknown): NamedInvocation | undefined {
  const data = (payload as { data?: Partial<NamedInvocation> } | null)?.data;
  if (!data || ![data.invocation_id, data.session_id, data.model_code, data.model_version].every((value) => typeof value === 'string')) return undefined;
  return data as NamedInvocation;
}
