import path from 'node:path';
import type { Logger } from 'pino';
import type { Config } from '../kernel/config/config.js';
import { HttpClient } from '../infra/net/http-client.js';
import { StorageClasses } from '../infra/storage/classes.js';
import { egressPolicy } from './egress.js';

/** What reaches model servers, registries and storage backends, with the configured policy and deadlines: the platform's and the operator's. */
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
  return { policy, http, storageClasses };
}
