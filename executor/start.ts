import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Platform } from '../platform/platform.js';
import { pingDatabase } from '../infra/db/database.js';
import { Executor } from './executor.js';

/** The executor of one process: its runners, and health and metrics endpoints. */
export async function startExecutor(platform: Platform, options: { healthPort?: number } = {}) {
  const { config } = platform;
  const { proxies } = platform;
  await proxies.start();
  const executor = new Executor({
    db: platform.db,
    uploads: platform.services.uploads,
    queue: platform.queue,
    doorbell: platform.doorbell,
    logger: platform.logger.child({ component: 'executor' }),
    resolveProxy: (model) => proxies.resolve(model),
    options: {
      concurrency: config.executorConcurrency,
      leaseMs: config.executorLeaseSeconds * 1000,
      pollMs: config.executorPollMs,
      retryBackoffMs: config.executorRetryBackoffMs,
      context: { maxInvocations: config.contextMaxInvocations, maxBytes: config.contextMaxBytes },
    },
    onClaimed: (row) => void platform.metrics.invocations.claimed(row),
    onFinished: (row, model, outcome, seconds) => void platform.metrics.invocations.record(row, model, outcome, seconds),
  });
  await executor.start();
  const health = options.healthPort === undefined ? undefined : await healthServer(platform, options.healthPort, () => proxies.synced);
  platform.logger.info({ concurrency: config.executorConcurrency, queue: config.amqpUrl ? 'rabbitmq' : 'in-process' }, 'executor started');
  return {
    executor,
    /** Where /healthz, /readyz and /metrics answer (with healthPort 0, the port picked). */
    healthUrl: health ? urlOf(health) : undefined,
    async close() {
      await executor.stop();
      await proxies.stop();
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
