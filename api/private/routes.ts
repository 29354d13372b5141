import type { Request } from 'express';
import { operationRoutes, type OperationRoutes } from '../../infra/http/operations/routes.js';
import type { Platform } from '../../platform/platform.js';
import { authenticate, principalOf } from '../shared/authenticate.js';
import { pageOf, sendPage } from '../../infra/http/pagination.js';
import { mountFileRoutes } from '../shared/file-routes.js';
import { mountMetricRoutes } from './metrics.routes.js';
import { mountWebhookRoutes } from './webhooks.routes.js';

const param = (req: Request, name: string) => String(req.params[name]);

/** Routes of the private server: models and their aliases, deployments, storage, webhook endpoints and supervisors' uploads. */
export function privateRoutes(platform: Platform): OperationRoutes {
  const { models, offers, deployments, storage, uploads, aliases, aliasPolicies, aliasComparison } = platform.services;
  const auth = authenticate(platform.authenticator);
  const supervisor = auth('supervisor');
  const member = auth('workspace');
  const router = operationRoutes();

  router.post('/api/platform_model', supervisor, async (req, res) => {
    res.status(201).json(await models.register(principalOf(res), req.body));
  });
  router.delete('/api/platform_model/:modelCode/version/:modelVersion', supervisor, async (req, res) => {
    await models.remove(principalOf(res), param(req, 'modelCode'), param(req, 'modelVersion'));
    res.status(204).end();
  });

  const alias = (req: Request) => [param(req, 'modelCode'), param(req, 'alias')] as const;
  router.get('/api/platform_model/:modelCode/alias', member, async (req, res) => {
    sendPage(req, res, await aliases.list(principalOf(res), param(req, 'modelCode'), pageOf(req)));
  });
  router.get('/api/platform_model/:modelCode/alias/:alias', member, async (req, res) => {
    res.json(await aliases.get(principalOf(res), ...alias(req)));
  });
  router.put('/api/platform_model/:modelCode/alias/:alias', supervisor, async (req, res) => {
    res.json(await aliases.set(principalOf(res), ...alias(req), req.body.version, String(req.id)));
  });
  router.delete('/api/platform_model/:modelCode/alias/:alias', supervisor, async (req, res) => {
    await aliases.remove(principalOf(res), ...alias(req), String(req.id));
    res.status(204).end();
  });
  router.get('/api/platform_model/:modelCode/alias/:alias/policy', member, async (req, res) => {
    res.json(await aliasPolicies.get(principalOf(res), ...alias(req)));
  });
  router.put('/api/platform_model/:modelCode/alias/:alias/policy', supervisor, async (req, res) => {
    res.json(await aliasPolicies.set(principalOf(res), ...alias(req), req.body, String(req.id)));
  });
  router.delete('/api/platform_model/:modelCode/alias/:alias/policy', supervisor, async (req, res) => {
    await aliasPolicies.remove(principalOf(res), ...alias(req), String(req.id));
    res.status(204).end();
  });
  router.get('/api/platform_model/:modelCode/alias/:alias/comparison', member, async (req, res) => {
    res.json(await aliasComparison.compare(principalOf(res), ...alias(req), { since: req.query.since, until: req.query.until, tolerance: req.query.tolerance }));
  });
  router.get('/api/platform_model/:modelCode/alias/:alias/history', supervisor, async (req, res) => {
    sendPage(req, res, await aliases.history(principalOf(res), ...alias(req), pageOf(req)));
  });

  router.post('/api/deployment', supervisor, async (req, res) => {
    res.status(201).json([await deployments.create(principalOf(res), req.body)]);
  });
  router.get('/api/deployment', member, async (req, res) => {
    sendPage(req, res, await deployments.list(principalOf(res), pageOf(req)));
  });
  router.get('/api/deployment/:deploymentKey', member, async (req, res) => {
    res.json([await deployments.get(principalOf(res), param(req, 'deploymentKey'))]);
  });
  router.get('/api/deployment/:deploymentKey/offered_model', supervisor, async (req, res) => {
    res.json(await offers.list(principalOf(res), param(req, 'deploymentKey')));
  });
  router.patch('/api/deployment/:deploymentKey', supervisor, async (req, res) => {
    res.json([await deployments.setMaxConcurrentCalls(principalOf(res), param(req, 'deploymentKey'), req.body.max_concurrent_calls)]);
  });
  router.delete('/api/deployment/:deploymentKey', supervisor, async (req, res) => {
    await deployments.remove(principalOf(res), param(req, 'deploymentKey'));
    res.status(204).end();
  });

  router.post('/api/storage', supervisor, async (req, res) => {
    res.status(201).json(await storage.create(principalOf(res), req.body));
  });
  router.get('/api/storage', supervisor, async (req, res) => {
    sendPage(req, res, await storage.list(principalOf(res), pageOf(req)));
  });
  router.get('/api/storage/:storage_key', supervisor, async (req, res) => {
    res.json(await storage.get(principalOf(res), param(req, 'storage_key')));
  });
  router.delete('/api/storage/:storage_key', supervisor, async (req, res) => {
    await storage.remove(principalOf(res), param(req, 'storage_key'));
    res.status(204).end();
  });

  mountFileRoutes(router, uploads, supervisor);
  mountMetricRoutes(router, platform);
  mountWebhookRoutes(router, platform.services.webhooks, supervisor);
  return router;
}
