import { createMailer } from './mail/mailer.js';
import path from 'node:path';
import type { Config } from './config/config.js';
import { createLogger, type Logger } from './logging/logger.js';
import { createDatabase, type Db } from './db/database.js';
import { acquireChangeFeed, releaseChangeFeed } from './db/change-feed.js';
import { loadSigningKeys, type SigningKeys } from './auth/keys.js';
import { TokenService } from './auth/tokens.js';
import { Authenticator } from './auth/authenticator.js';
import { RateLimiter } from './auth/rate-limit.js';
import { loadSecretBox, type SecretBox } from './crypto/secrets.js';
import { LoginService } from './identity/login.service.js';
import { WorkspacesService } from './identity/workspaces.service.js';
import { ApiTokensService } from './identity/api-tokens.service.js';
import { OAuthApplicationsService } from './identity/oauth.service.js';
import { InvitationsService } from './identity/invitations.service.js';
import { UrlPolicy } from './net/url-policy.js';
import { HttpClient } from './net/http-client.js';
import { ConnectorCatalog } from './connectors/registry.js';
import { StorageClasses } from './storage/classes.js';
import { StorageConfigsService, type StorageListener } from './files/storage.service.js';
import { UploadsService } from './files/uploads.service.js';
import { DeploymentConnectors } from './deployments/connectors.js';
import { DeploymentsService, type DeploymentListener } from './deployments/service.js';
import { ModelRegistrationService } from './models/registration.service.js';
import { ModelCatalogService } from './models/catalog.service.js';
import type { WorkQueue } from './queue/queue.js';
import { MemoryQueue } from './queue/memory.js';
import { RabbitQueue } from './queue/rabbitmq.js';
import { OutboxRelay } from './invocations/relay.js';
import { InvocationsService } from './invocations/service.js';
import { createPlatformMetrics } from './metrics/platform-metrics.js';
import { createPrometheusClient } from './metrics/prometheus.js';
import { MetricsQueryService } from './metrics/query.service.js';
import { createKubeSide } from './kube/wiring.js';

export interface PlatformOptions {
  logger?: Logger;
  keys?: SigningKeys;
  db?: Db;
  box?: SecretBox;
  queue?: WorkQueue;
  now?: () => number;
  /** Desired-state hooks (the Kubernetes writer). */
  deploymentListener?: DeploymentListener;
  storageListener?: StorageListener;
}

const list = (value: string) => value.split(',').map((s) => s.trim()).filter(Boolean);

/**
 * Everything a didyma process shares, built once from the validated config:
 * logger, database, keys, queue, clients and the services. Servers, the
 * executor and the CLI receive it instead of building their own.
 */
export function createPlatform(config: Config, options: PlatformOptions = {}) {
  const now = options.now ?? Date.now;
  const logger = options.logger ?? createLogger(config.logLevel);
  const db = options.db ?? createDatabase({ url: config.databaseUrl, pgliteDir: path.join(config.dataDir, 'db'), poolMax: config.databasePoolMax });
  // Request-path caches that follow every committed change (DIDYMA_READ_CACHE_SIZE=0: none).
  const readCache = config.readCacheSize > 0 ? { changes: acquireChangeFeed(db, logger.child({ component: 'changes' })), maxEntries: config.readCacheSize } : undefined;
  const keys = options.keys ?? loadSigningKeys({ privateKeyFile: config.jwtPrivateKeyFile, publicKeyFile: config.jwtPublicKeyFile, dataDir: config.dataDir });
  const box = options.box ?? loadSecretBox(config.secretKeyFile, config.dataDir);
  const tokens = new TokenService(
    keys,
    { issuer: config.jwtIssuer, audience: config.jwtAudience, accessTtlSeconds: config.accessTokenTtl, refreshTtlSeconds: config.refreshTokenTtl, cacheSize: config.tokenCacheSize },
    now,
  );
  const windowMs = config.loginLimitWindow * 1000;
  const identity = {
    login: new LoginService({
      db,
      tokens,
      accountLimiter: new RateLimiter(db, config.loginLimitPerAccount, windowMs, now),
      clientLimiter: new RateLimiter(db, config.loginLimitPerClient, windowMs, now),
    }),
    workspaces: new WorkspacesService(db),
    apiTokens: new ApiTokensService(db, now),
    oauth: new OAuthApplicationsService(db),
    invitations: new InvitationsService(db, { ttlSeconds: config.invitationTtl, dashboardUrl: config.dashboardUrl }, now, createMailer(config.smtpUrl, config.mailFrom, logger)),
  };

  const policy = new UrlPolicy({ allowLoopback: config.devMode, allow: list(config.urlAllow), deny: list(config.urlDeny) });
  const http = new HttpClient({ policy, timeoutMs: config.upstreamTimeoutMs, maxResponseBytes: config.upstreamMaxResponseBytes, logger });
  const connectorCatalog = new ConnectorCatalog({ policy });
  const connectors = new DeploymentConnectors(connectorCatalog, http, box);
  const storageClasses = new StorageClasses({ filesystemRoot: config.filesystemStorage || config.devMode ? path.resolve(config.dataDir, 'files') : undefined });
  // Kubernetes mode: the API also writes custom resources (undefined in the embedded default).
  const kube = createKubeSide(config, { db, box, logger });
  const storage = new StorageConfigsService(db, storageClasses, box, policy, options.storageListener ?? kube?.listeners.storage);
  const queue: WorkQueue = options.queue ?? (config.amqpUrl ? new RabbitQueue({ url: config.amqpUrl, queue: config.queueName, logger }) : new MemoryQueue());
  const relay = new OutboxRelay(db, queue, logger.child({ component: 'relay' }), { batchSize: 200, pollMs: config.relayPollMs, republishAfterMs: 10 * 60_000, dispatchGraceMs: 2000 });
  const catalog = new ModelCatalogService(db, readCache);
  const metrics = createPlatformMetrics(db, logger.child({ component: 'metrics' }), { token: config.metricsToken });
  // Operator configuration, not a request, names this URL: its own client and URL policy.
  const prometheus = config.prometheusUrl
    ? createPrometheusClient({ url: config.prometheusUrl, timeoutMs: config.prometheusTimeoutMs, maxResponseBytes: config.upstreamMaxResponseBytes, logger: logger.child({ component: 'prometheus' }) })
    : undefined;
  const services = {
    storage,
    uploads: new UploadsService(db, storage, { maxBytes: config.maxUploadBytes, mediaTypes: list(config.uploadMediaTypes), ttlSeconds: config.uploadTtl }),
    deployments: new DeploymentsService(db, connectorCatalog, box, options.deploymentListener ?? kube?.listeners.deployments),
    models: new ModelRegistrationService(db, connectors),
    catalog,
    invocations: new InvocationsService(db, catalog, relay),
    metrics: new MetricsQueryService(db, prometheus),
  };

  return {
    config,
    logger,
    db,
    keys,
    box,
    tokens,
    authenticator: new Authenticator(db, tokens, now, readCache),
    identity,
    policy,
    http,
    connectorCatalog,
    connectors,
    queue,
    relay,
    metrics,
    services,
    kube,
    now,
    async close() {
      await kube?.resync.stop();
      await relay.stop();
      prometheus?.close();
      if (!options.queue) await queue.close();
      if (readCache) await releaseChangeFeed(db);
      // A database handed in (tests share one) belongs to whoever made it.
      if (!options.db) await db.destroy();
    },
  };
}

export type Platform = ReturnType<typeof createPlatform>;
