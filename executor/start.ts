import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Platform } from '../platform/platform.js';
import { pingDatabase } from '../infra/db/database.js';
import { deploymentsStore } from '../features/deployments/store.js';
import { Executor, type InferenceProxy } from './executor.js';

/** The executor of one process: consumer, and health and metrics endpoints (the platform runs the relay that publishes its explanations). */
export async function startExecutor(platform: Platform, options: { healthPort?: number } = {}) {
  const { config } = platform;
  // Kubernetes mode: the operator's proxy configuration (a ConfigMap, followed live); else the database.
  const clusterProxies = platform.kube?.proxyResolver({ catalog: platform.connectorCatalog, http: platform.http });
  await clusterProxies?.start();
  const proxies = new Map<number, { proxy: InferenceProxy; until: number }>();
  const executor = new Executor({
    db: platform.db,
    uploads: platform.services.uploads,
    queue: platform.queue,
    relay: platform.relay,
    logger: platform.logger.child({ component: 'executor' }),
    resolveProxy: clusterProxies ? (model) => clusterProxies.resolve(model) : async (model) => {
      // Deployments are never edited (only soft-deleted, which does not stop queued work):
      // a short-lived proxy per deployment saves a query and a decryption per invocation.
      const cached = proxies.get(model.deployment_id);
      if (cached && cached.until > Date.now()) return cached.proxy;
      const deployment = await deploymentsStore.byId(platform.db, model.deployment_id);
      if (!deployment) throw new Error(`The deployment of ${model.model_code} ${model.version} no longer exists.`);
      const proxy = platform.connectors.proxyOf(deployment);
      if (proxies.size >= 1000) proxies.clear();
      proxies.set(model.deployment_id, { proxy, until: Date.now() + 10_000 });
      return proxy;
    },
    options: {
      concurrency: config.executorConcurrency,
      leaseMs: config.executorLeaseSeconds * 1000,
      retryBackoffMs: config.executorRetryBackoffMs,
      context: { maxInvocations: config.contextMaxInvocations, maxBytes: config.contextMaxBytes },
    },
    onFinished: (row, model, outcome, seconds) => void platform.metrics.invocations.record(row, model, outcome, seconds),
  });
  await executor.start();
  const health = options.healthPort === undefined ? undefined : await healthServer(platform, options.healthPort, () => clusterProxies?.synced ?? true);
  platform.logger.info({ concurrency: config.executorConcurrency, queue: config.amqpUrl ? 'rabbitmq' : 'in-process' }, 'executor started');
  return {
    executor,
    /** Where /healthz, /readyz and /metrics answer (with healthPort 0, the port picked). */
    healthUrl: health ? urlOf(health) : undefined,
    async close() {
      await executor.stop();
      await clusterProxies?.stop();
      await new Promise((resolve) => health?.close(resolve) ?? resolve(undefined));
    },
  };
}

async function healthServer(platform: Platform, port: number, proxiesSynced: () => boolean): Promise<http.Server> {
  const metrics = platform.metrics.handler('executor');
  const server = http.createServer(async (req, res) => {
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (req.url === '/healthz') return send(200, { status: 'ok' });
    if (req.url === '/metrics') return metrics(req, res);
    if (req.url === '/readyz') {
      try {
        await pingDatabase(platform.db);
        if (!platform.queue.healthy()) throw new Error('queue not connected');
        if (!proxiesSynced()) throw new Error('proxy configuration not synced');
        return send(200, { status: 'ready' });
      } catch (error) {
        return send(503, { status: 'unavailable', message: (error as Error).message });
      }
    }
    send(404, { message: 'Not found.', message_code: 'not_found' });
  });
  await new Promise<void>((resolve) => server.listen(port, platform.config.bindHost, resolve));
  return server;
}

function urlOf(server: http.Server): string {
  const { address, port } = server.address() as AddressInfo;
  return `http://${address.includes(':') ? `[${address}]` : address}:${port}`;
}
