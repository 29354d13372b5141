import path from 'node:path';
import type { Logger } from 'pino';
import type { Config } from '../kernel/config/config.js';
import { DeliveryClient } from '../infra/net/delivery-client.js';
import { HttpClient } from '../infra/net/http-client.js';
import { StorageClasses } from '../infra/storage/classes.js';
import { egressPolicy } from './egress.js';

/** A receiver's answer is read up to this size: what is recorded of it is a short excerpt. */
const WEBHOOK_MAX_RESPONSE_BYTES = 64 * 1024;

/** What reaches model servers, registries, storage backends and webhook receivers, with the configured policy and deadlines: the platform's and the operator's. */
export function outboundClients(config: Config, logger: Logger) {
  const policy = egressPolicy(config);
  const http = new HttpClient({
    policy,
    connectTimeoutMs: config.upstreamConnectTimeoutMs,
    headersTimeoutMs: config.upstreamHeadersTimeoutMs,
    timeoutMs: config.upstreamTimeoutMs,
    maxResponseBytes: config.upstreamMaxResponseBytes,
    logger,
  });
  const storageClasses = new StorageClasses({
    filesystemRoot: config.filesystemStorage || config.devMode ? path.resolve(config.dataDir, 'files') : undefined,
    lookupFor: (port) => policy.lookupFor(port),
    deadlines: { connectMs: config.upstreamConnectTimeoutMs, headersMs: config.storageHeadersTimeoutMs, totalMs: config.storageTimeoutMs },
  });
  const webhooks = new DeliveryClient({
    policy,
    deadlines: { connectMs: Math.min(config.upstreamConnectTimeoutMs, config.webhookTimeoutMs), headersMs: config.webhookTimeoutMs, totalMs: config.webhookTimeoutMs },
    maxResponseBytes: WEBHOOK_MAX_RESPONSE_BYTES,
  });
  return { policy, http, storageClasses, webhooks };
}
