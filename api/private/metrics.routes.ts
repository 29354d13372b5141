import type { OperationRoutes } from '../../infra/http/operations/routes.js';
import type { Platform } from '../../platform/platform.js';
import { authenticate, principalOf } from '../shared/authenticate.js';

/**
 * `GET /api/metric` and `GET /api/metric/{metricName}`. A workspace-bound
 * token gets past authentication; the service admits supervisors of the
 * token's workspace and staff users.
 */
export function mountMetricRoutes(router: OperationRoutes, platform: Platform): void {
  const { metrics } = platform.services;
  const signedIn = authenticate(platform.authenticator)('workspace');

  router.get('/api/metric', signedIn, (_req, res) => {
    res.json(metrics.list(principalOf(res)));
  });
  router.get('/api/metric/:metricName', signedIn, async (req, res) => {
    res.json(await metrics.query(principalOf(res), String(req.params.metricName), req.query));
  });
}
