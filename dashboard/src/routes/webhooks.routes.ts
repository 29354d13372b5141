import type { Request, Response, Router } from 'express';
import { at, principalOf, seeOther, visitOf, type Dashboard } from '../context.js';
import { sendPage } from '../render.js';
import { webhooksBody, WEBHOOK_EVENT_CHOICES, type WebhooksPage } from '../pages/webhooks.js';
import { deliveriesBody, DELIVERIES_PER_PAGE, namedInvocationOf } from '../pages/webhook-deliveries.js';
import type { WebhookEvent } from '../../../features/webhooks/endpoints.store.js';
import { DELIVERY_STATUSES, type DeliveryStatus } from '../../../features/webhooks/deliveries.store.js';
import { InputError } from '../../../kernel/errors/errors.js';
import { checked, field, idParam, trimmed } from '../web/forms.js';
import { attempt } from './outcome.js';
import { olderOf, pageAt } from './listing.js';

/** Webhook endpoints (secret shown once), their deliveries with every attempt, and redelivery. */
export function mountWebhookRoutes(router: Router, dash: Dashboard): void {
  const webhooks = dash.platform.services.webhooks;

  router.get('/webhooks', (req, res) => renderEndpoints(dash, req, res));

  router.post('/webhooks', async (req, res) => {
    const draft = { url: trimmed(req, 'url'), description: trimmed(req, 'description'), events: WEBHOOK_EVENT_CHOICES.filter((event) => checked(req, `event:${event}`)) };
    const outcome = await attempt(async () => {
      if (!draft.events.length) throw new InputError('Choose at least one event.');
      return webhooks.create(principalOf(res), { url: draft.url, description: draft.description, events: draft.events as WebhookEvent[] });
    });
    if (outcome.mistake) return renderEndpoints(dash, req, res, { draft }, { error: outcome.mistake.message, status: outcome.mistake.status });
    await renderEndpoints(dash, req, res, { created: { url: outcome.value.url, secret: outcome.value.secret } });
  });

  router.post('/webhooks/:id/enabled', async (req, res) => {
    const enabled = field(req, 'enabled') === 'true';
    await webhooks.update(principalOf(res), idParam(req), { enabled });
    seeOther(res, at('/webhooks'), enabled ? 'webhook-enabled' : 'webhook-disabled');
  });

  router.post('/webhooks/:id/rotate', async (req, res) => {
    const rotated = await webhooks.rotateSecret(principalOf(res), idParam(req));
    await renderEndpoints(dash, req, res, { created: { url: rotated.url, secret: rotated.secret } });
  });

  router.post('/webhooks/:id/delete', async (req, res) => {
    await webhooks.remove(principalOf(res), idParam(req));
    seeOther(res, at('/webhooks'), 'webhook-deleted');
  });

  router.get('/webhooks/:id', async (req, res) => {
    const principal = principalOf(res);
    const status = deliveryStatusOf(req.query.status);
    const endpoint = await webhooks.get(principal, idParam(req));
    const page = pageAt(req, DELIVERIES_PER_PAGE);
    const found = await webhooks.deliveries(principal, endpoint.id, page, status);
    const named = found.items.map((delivery) => namedInvocationOf(delivery.payload)?.session_id).filter((id) => id !== undefined);
    const ownSessions = await dash.platform.services.invocations.ownSessions(principal, named);
    const body = deliveriesBody({ csrfToken: visitOf(res).csrfToken, endpoint, deliveries: found.items, total: found.total, status, older: olderOf(found), paged: Boolean(page.after), ownSessions });
    await sendPage(dash, req, res, { title: 'Webhook deliveries', body, current: '/webhooks' });
  });

  router.post('/webhooks/:id/deliveries/:deliveryId/redeliver', async (req, res) => {
    const id = idParam(req);
    const outcome = await attempt(() => webhooks.redeliver(principalOf(res), id, String(req.params.deliveryId)));
    if (outcome.mistake && outcome.mistake.status !== 409) throw outcome.mistake;
    seeOther(res, at(`/webhooks/${id}`), outcome.mistake ? 'webhook-in-flight' : 'webhook-redelivered');
  });
}

async function renderEndpoints(dash: Dashboard, req: Request, res: Response, extra: Partial<WebhooksPage> = {}, problem: { error?: string; status?: number } = {}) {
  const { items } = await dash.platform.services.webhooks.list(principalOf(res), { limit: 1000, offset: 0 });
  const page: WebhooksPage = { csrfToken: visitOf(res).csrfToken, endpoints: items, ...extra };
  await sendPage(dash, req, res, { title: 'Webhooks', body: webhooksBody(page), current: '/webhooks', ...problem });
}

/** The status filter of the deliveries page; blank: every status. */
export function deliveryStatusOf(value: unknown): DeliveryStatus | undefined {
  if (value === undefined || value === '') return undefined;
  if (DELIVERY_STATUSES.includes(value as DeliveryStatus)) return value as DeliveryStatus;
  throw new InputError(`status: one of ${DELIVERY_STATUSES.join(', ')}, or blank for every status.`, [{ field: 'status', message: 'is not a delivery status' }]);
}
