import type { Request, RequestHandler } from 'express';
import type { OperationRoutes } from '../../infra/http/operations/routes.js';
import { pageOf, queryText, sendPage } from '../../infra/http/pagination.js';
import type { DeliveryStatus } from '../../features/webhooks/deliveries.store.js';
import type { WebhooksService } from '../../features/webhooks/service.js';
import { principalOf } from '../shared/authenticate.js';

const endpointId = (req: Request) => Number(req.params.webhookId);
const deliveryId = (req: Request) => String(req.params.deliveryId);

/** Webhook endpoints of the token's workspace and their deliveries: workspace configuration, for supervisors. */
export function mountWebhookRoutes(router: OperationRoutes, webhooks: WebhooksService, supervisor: RequestHandler): void {
  router.post('/api/webhook', supervisor, async (req, res) => {
    res.status(201).json(await webhooks.create(principalOf(res), req.body));
  });
  router.get('/api/webhook', supervisor, async (req, res) => {
    sendPage(req, res, await webhooks.list(principalOf(res), pageOf(req)));
  });
  router.get('/api/webhook/:webhookId', supervisor, async (req, res) => {
    res.json(await webhooks.get(principalOf(res), endpointId(req)));
  });
  router.patch('/api/webhook/:webhookId', supervisor, async (req, res) => {
    res.json(await webhooks.update(principalOf(res), endpointId(req), req.body));
  });
  router.delete('/api/webhook/:webhookId', supervisor, async (req, res) => {
    await webhooks.remove(principalOf(res), endpointId(req));
    res.status(204).end();
  });
  router.post('/api/webhook/:webhookId/rotate_secret', supervisor, async (req, res) => {
    res.json(await webhooks.rotateSecret(principalOf(res), endpointId(req)));
  });
  router.get('/api/webhook/:webhookId/delivery', supervisor, async (req, res) => {
    const status = queryText(req, 'status') as DeliveryStatus | undefined;
    sendPage(req, res, await webhooks.deliveries(principalOf(res), endpointId(req), pageOf(req), status));
  });
  router.get('/api/webhook/:webhookId/delivery/:deliveryId', supervisor, async (req, res) => {
    res.json(await webhooks.delivery(principalOf(res), endpointId(req), deliveryId(req)));
  });
  router.post('/api/webhook/:webhookId/delivery/:deliveryId/redeliver', supervisor, async (req, res) => {
    res.status(202).json(await webhooks.redeliver(principalOf(res), endpointId(req), deliveryId(req)));
  });
}
