import { createMailer } from '../infra/mail/mailer.js';
import { ClosingSteps } from '../infra/process/closing.js';
import { Scheduler } from '../infra/process/scheduler.js';
import fs from 'node:fs';
import path from 'node:path';
import { webhookEndpointCap, webhookWorkspaceCap, type Config } from '../kernel/config/config.js';
import { createLogger, type Logger } from '../infra/logging/logger.js';
import { createDatabase, type DatabaseOptions, type Db } from '../infra/db/database.js';
import { acquireChangeFeed, releaseChangeFeed, type ChangeFeed } from '../infra/db/change-feed.js';
import { loadTokenKeys, type TokenKeys } from '../features/auth/keys.js';
import { TokenService } from '../features/auth/tokens.js';
import { Authenticator } from '../features/identity/authenticator.js';
import { LoginGuard } from '../features/auth/login-guard.js';
import { rateLimitStore } from '../features/auth/rate-limit.store.js';
import { loadSecretBox, type SecretBox } from '../infra/crypto/secrets.js';
import { LoginService } from '../features/identity/login.service.js';
import { LockoutsService } from '../features/identity/lockouts.service.js';
import { WorkspacesService } from '../features/identity/workspaces.service.js';
import { ApiTokensService } from '../features/identity/api-tokens.service.js';
import { OAuthApplicationsService } from '../features/identity/oauth.service.js';
import { InvitationsService } from '../features/identity/invitations.service.js';
import { invitationsStore } from '../features/identity/invitations.store.js';
import { oauthStore } from '../features/identity/oauth.store.js';
import { usersStore } from '../features/identity/users.store.js';
import { workspacesStore } from '../features/identity/workspaces.store.js';
import { refreshStore } from '../features/identity/refresh.store.js';
import { apiTokensStore } from '../features/identity/api-tokens.store.js';
import { SsoService } from '../features/identity/sso/sso.service.js';
import { ssoStore } from '../features/identity/sso/store.js';
import { SsoProviders } from '../features/identity/sso/providers.js';
import { SsoRefreshFollower } from '../features/identity/sso/follower.js';
import { SignInStarts } from '../features/identity/sso/starts.js';
import { TokenExchangeService } from '../features/identity/workload/exchange.service.js';
import { WorkloadPrincipals } from '../features/identity/workload/principals.js';
import { IssuerTokens } from '../features/identity/workload/issuers.js';
import { ServiceAccountTokens } from '../features/identity/workload/service-accounts.js';
import { TokenReviewer } from '../infra/kube/token-review.js';
import { kubeApiOf } from '../infra/kube/connection.js';
import { outboundClients } from './outbound.js';
import { ConnectorCatalog } from '../infra/connectors/registry.js';
import { StorageConfigsService } from '../features/files/storage.service.js';
import { UploadsService } from '../features/files/uploads.service.js';
import { DeploymentConnectors } from '../features/deployments/connectors.js';
import { DatabaseProxyResolver, type ProxyResolver } from '../features/deployments/proxy-resolver.js';
import { DeploymentsService } from '../features/deployments/service.js';
import { ModelOffersService } from '../features/models/offers.service.js';
import { ModelRegistrationService, type CompileSchema } from '../features/models/registration.service.js';
import { ModelRevisionsService } from '../features/models/revisions.service.js';
import { ModelCatalogService } from '../features/models/catalog.service.js';
import { ModelAliasesService } from '../features/models/aliases.service.js';
import { AliasPoliciesService } from '../features/models/alias-policies.service.js';
import { modelAliasesStore } from '../features/models/aliases.store.js';
import { aliasPoliciesStore } from '../features/models/alias-policies.store.js';
import { AliasComparisonService } from '../features/models/comparison.service.js';
import { aliasComparisonStore } from '../features/models/comparison.store.js';
import { ALIAS_GUARD_INTERVAL_MS, AliasGuardsService } from '../features/models/alias-guards.service.js';
import type { WorkQueue } from '../infra/queue/queue.js';
import { MemoryQueue } from '../infra/queue/memory.js';
import { RabbitQueue } from '../infra/queue/rabbitmq.js';
import { Doorbell } from '../features/invocations/doorbell.js';
import { DELETED_BEFORE_RUN, invocationState } from '../features/invocations/state.js';
import { Sweeper } from '../features/invocations/sweeper.js';
import { InvocationsService } from '../features/invocations/service.js';
import { ValidationPool } from '../features/invocations/validation-pool.js';
import { DatasetsService } from '../features/datasets/service.js';
import { createPlatformMetrics } from '../features/metrics/platform-metrics.js';
import { createPrometheusClient } from '../features/metrics/prometheus.js';
import { MetricsQueryService } from '../features/metrics/query.service.js';
import { invocationsStore, sessionsStore } from '../features/invocations/store.js';
import { eventsPurge } from '../features/invocations/events.js';
import { SessionEventReaders } from '../features/invocations/session-readers.js';
import { StreamSlots } from '../features/invocations/stream-slots.js';
import { PredictionWaits } from '../features/invocations/waits.js';
import { filesStore, storageConfigsStore, uploadsStore } from '../features/files/store.js';
import { datasetsStore } from '../features/datasets/store.js';
import { deploymentsStore } from '../features/deployments/store.js';
import { modelsStore } from '../features/models/store.js';
import { createKubeSide, kubeCluster } from './kube/wiring.js';
import { recordedServingState } from '../features/models/serving-states.js';
import { servingStatesStore } from '../features/models/serving-states.store.js';
import { DEFAULT_IDEMPOTENCY_OPTIONS, IdempotencyService } from '../features/idempotency/service.js';
import { idempotencyStore } from '../features/idempotency/store.js';
import { WebhooksService } from '../features/webhooks/service.js';
import { WebhookDeliverer } from '../features/webhooks/deliverer.js';
import { webhookEndpointsStore } from '../features/webhooks/endpoints.store.js';
import { webhookDeliveriesStore } from '../features/webhooks/deliveries.store.js';
import { deliveriesPurge } from '../features/webhooks/purge.js';
import { AuditTrail } from '../features/audit/trail.js';
import { ShadowDispatch } from '../features/invocations/shadows.js';
import { auditStore } from '../features/audit/store.js';

export interface PlatformOptions {
  logger?: Logger;
  keys?: TokenKeys;
  db?: Db;
  box?: SecretBox;
  queue?: WorkQueue;
  now?: () => number;
}

/** Without change notifications (the LISTEN connection is down), each session with event streams is read this often. */
const EVENT_POLL_MS = 1_000;

/** The database of a process: through the pooler when there is one, LISTEN where the config says, TLS with the configured CA. */
export function databaseOptionsOf(config: Config): DatabaseOptions {
  const listen = config.databaseListen ? config.databaseListenUrl : 'off';
  return { url: config.databaseUrl, pgliteDir: path.join(config.dataDir, 'db'), poolMax: config.databasePoolMax, ca: readPem(config.databaseCaFile), pooler: config.databasePooler, listen };
}

const readPem = (file: string | undefined) => (file ? fs.readFileSync(file, 'utf8') : undefined);

const list = (value: string) => value.split(',').map((s) => s.trim()).filter(Boolean);

/**
 * Everything a didyma process shares, built once from the validated config:
 * logger, database, keys, queue, clients and the services. Servers, the
 * executor and the CLI receive it instead of building their own.
 */
export function createPlatform(config: Config, options: PlatformOptions = {}) {
  const now = options.now ?? Date.now;
  const logger = options.logger ?? createLogger(config.logLevel);
  const db = options.db ?? createDatabase(databaseOptionsOf(config));
  // Request-path caches that follow every committed change (DIDYMA_READ_CACHE_SIZE=0: none).
  // One LISTEN connection per process, opened by the first part that needs it (the read caches, the event streams).
  let changes: ChangeFeed | undefined;
  const changeFeed = () => (changes ??= acquireChangeFeed(db, logger.child({ component: 'changes' })));
  const readCache = config.readCacheSize > 0 ? { changes: changeFeed(), maxEntries: config.readCacheSize } : undefined;
  const keys =
    options.keys ??
    loadTokenKeys({
      privateKeyFile: config.jwtPrivateKeyFile,
      publicKeyFile: config.jwtPublicKeyFile,
      jwksUrl: config.jwtJwksUrl,
      dataDir: config.dataDir,
      published: { cooldownMs: config.jwtJwksCooldownSeconds * 1000, timeoutMs: config.upstreamTimeoutMs },
    });
  const box = options.box ?? loadSecretBox(config.secretKeyFile, config.dataDir);
  const tokens = new TokenService(
    keys,
    { issuer: config.jwtIssuer, audience: config.jwtAudience, accessTtlSeconds: config.accessTokenTtl, refreshTtlSeconds: config.refreshTokenTtl, cacheSize: config.tokenCacheSize },
    now,
  );
  const loginGuard = new LoginGuard(
    db,
    rateLimitStore,
    {
      perSource: config.loginLimitPerSource,
      perAccount: config.loginLimitPerAccount,
      perAddress: config.loginLimitPerClient,
      windowMs: config.loginLimitWindow * 1000,
      maxDelayMs: config.loginDelayMaxMs,
      maxWaiting: config.loginDelayMaxWaiting,
      knownSourceMs: config.loginKnownSourceDays * 86_400_000,
    },
    now,
  );
  const mailer = createMailer(config.smtpUrl, config.mailFrom, logger, {
    connectMs: config.upstreamConnectTimeoutMs,
    greetingMs: config.upstreamHeadersTimeoutMs ?? config.upstreamTimeoutMs,
    idleMs: config.upstreamTimeoutMs,
  });
  const audit = new AuditTrail(db, auditStore, { refusedPerMinute: config.auditRefusedPerMinute, retentionMs: config.auditRetentionDays * 86_400_000 }, logger.child({ component: 'audit' }), now);
  // Single sign-on: the configured OpenID Providers; the token families a sign-in through one opens follow it at each refresh.
  const ssoProviders = new SsoProviders(config.oidcConnections, Math.ceil(config.upstreamTimeoutMs / 1000));
  const ssoFollower = new SsoRefreshFollower({ db, box, stores: { sso: ssoStore, users: usersStore, workspaces: workspacesStore, refresh: refreshStore }, providers: ssoProviders, audit });
  const login = new LoginService({
    db,
    stores: { users: usersStore, workspaces: workspacesStore, refresh: refreshStore, oauth: oauthStore },
    tokens,
    guard: loginGuard,
    follower: ssoFollower,
    passwordSignIn: config.passwordSignIn,
  });
  const identity = {
    login,
    sso: new SsoService({
      db,
      box,
      stores: { sso: ssoStore, users: usersStore, workspaces: workspacesStore },
      login,
      audit,
      providers: ssoProviders,
      follower: ssoFollower,
      starts: new SignInStarts(db, rateLimitStore, config.ssoStartsPerSource, now),
      dashboardUrl: config.dashboardUrl,
      now,
    }),
    workload: workloadExchange(config, { db, tokens, guard: loginGuard }),
    lockouts: new LockoutsService(loginGuard),
    workspaces: new WorkspacesService(db, { workspaces: workspacesStore, refresh: refreshStore }),
    apiTokens: new ApiTokensService(db, apiTokensStore, now),
    oauth: new OAuthApplicationsService(db, { oauth: oauthStore, users: usersStore }),
    invitations: new InvitationsService(db, { invitations: invitationsStore, users: usersStore, workspaces: workspacesStore }, { ttlSeconds: config.invitationTtl, dashboardUrl: config.dashboardUrl }, now, mailer),
  };

  const shadows = new ShadowDispatch(db, sessionsStore, logger.child({ component: 'shadows' }));
  const metrics = createPlatformMetrics(db, { workspaces: workspacesStore, sessions: sessionsStore, deployments: deploymentsStore, models: modelsStore, invocations: invocationsStore }, logger.child({ component: 'metrics' }), { token: config.metricsToken, audit, shadows });
  // Every periodic task of the process under one owner: one failure policy, one set of metrics, one way to stop.
  const scheduler = new Scheduler(logger.child({ component: 'scheduler' }), metrics.background);

  const { policy, http, storageClasses, webhooks: webhookClient } = outboundClients(config, logger);
  const cluster = kubeCluster(config, logger);
  const connectorCatalog = new ConnectorCatalog({ policy, kserve: cluster?.kserve });
  const connectors = new DeploymentConnectors(connectorCatalog, http, box);
  // Kubernetes mode: a reconciler applies the committed rows as custom resources (undefined in the embedded default).
  const validation = new ValidationPool({ threads: config.validationThreads, timeoutMs: config.validationTimeoutMs, maxWaitingPerWorkspace: config.validationWaitingPerWorkspace });
  const compileSchema: CompileSchema = (workspaceId, schema, field) => validation.compile(workspaceId, schema, field);
  const revisions = new ModelRevisionsService(db, { models: modelsStore, deployments: deploymentsStore }, connectors, compileSchema, audit);
  const kube = cluster && createKubeSide(config, cluster, { db, box, catalog: connectorCatalog, http, logger, scheduler, changes: changeFeed, observer: metrics.cluster, revisions });
  // Where executors find a model's server: the operator's proxy configuration in Kubernetes mode, else the database.
  const proxies: ProxyResolver = kube?.proxies ?? new DatabaseProxyResolver(db, { deployments: deploymentsStore }, connectors);
  const storage = new StorageConfigsService(db, { storageConfigs: storageConfigsStore }, storageClasses, box, policy, kube !== undefined);
  const queue: WorkQueue = options.queue ?? (config.amqpUrl ? new RabbitQueue({ url: config.amqpUrl, queue: config.queueName, logger, ca: readPem(config.amqpCaFile) }) : new MemoryQueue());
  const doorbell = new Doorbell(queue);
  const idempotency = new IdempotencyService(db, idempotencyStore, { ...DEFAULT_IDEMPOTENCY_OPTIONS, retentionMs: config.idempotencyRetentionHours * 3_600_000 }, now, logger.child({ component: 'idempotency' }));
  // What the sweeper returns to the queue wakes executors at once, not at their next poll.
  const sweeper = new Sweeper(db, logger.child({ component: 'sweeper' }), { intervalMs: config.sweepIntervalMs }, scheduler, (count) => {
    metrics.leases.returned(count);
    doorbell.ring(count);
  });
  // Each purge a task of its own: a slow one holds neither lease recovery nor the other purges.
  const purges = [
    idempotency.purgeTask(),
    eventsPurge(db, config.eventRetentionHours * 3_600_000, now),
    deliveriesPurge(db, webhookDeliveriesStore, config.webhookRetentionHours * 3_600_000, now),
    audit.purgeTask(),
  ].map((purge) => scheduler.add(purge));
  // Its own loop and deadlines: a slow receiver never holds a transaction, a request or an executor.
  const deliverer = new WebhookDeliverer(
    db,
    webhookDeliveriesStore,
    (url, headers, body) => webhookClient.post(url, headers, body),
    box,
    logger.child({ component: 'webhooks' }),
    {
      schedule: config.webhookRetrySchedule,
      pollMs: config.webhookPollMs,
      concurrency: config.webhookConcurrency,
      // A workspace's slow receivers hold only its own slots, and one receiver fewer than those.
      caps: { perWorkspace: webhookWorkspaceCap(config), perEndpoint: webhookEndpointCap(config) },
      leaseMs: config.webhookTimeoutMs + 30_000,
      onAttempt: (outcome, queuedAt, firstRound) => metrics.webhooks.attempted(outcome, queuedAt, firstRound),
    },
    scheduler,
    now,
  );
  const webhooks = new WebhooksService(db, { endpoints: webhookEndpointsStore, deliveries: webhookDeliveriesStore }, box, policy, { maxEndpoints: config.webhookMaxEndpoints });
  let started = false;
  const closing = new ClosingSteps();
  // A model's page shows its KServe service's state as the private server last recorded it: the public server has no Kubernetes access.
  const servingState = config.kserveNamespaces.size ? recordedServingState(db, servingStatesStore, config.kserveNamespaces) : undefined;
  const catalog = new ModelCatalogService(db, { models: modelsStore, files: filesStore, aliases: modelAliasesStore }, readCache, servingState);
  const aliasPolicies = new AliasPoliciesService(db, { aliases: modelAliasesStore, policies: aliasPoliciesStore, models: modelsStore });
  const aliases = new ModelAliasesService(db, { aliases: modelAliasesStore, policies: aliasPoliciesStore, models: modelsStore }, aliasPolicies);
  const aliasGuards = new AliasGuardsService(db, { aliases: modelAliasesStore, policies: aliasPoliciesStore, comparison: aliasComparisonStore, models: modelsStore }, { policies: aliasPolicies, webhooks, audit }, () => new Date(now()));
  const guardEvaluation = scheduler.add(aliasGuards.task(ALIAS_GUARD_INTERVAL_MS));
  // Operator configuration, not a request, names this URL: its own client and URL policy.
  const prometheus = config.prometheusUrl
    ? createPrometheusClient({ url: config.prometheusUrl, timeoutMs: config.prometheusTimeoutMs, connectTimeoutMs: config.upstreamConnectTimeoutMs, maxResponseBytes: config.upstreamMaxResponseBytes, logger: logger.child({ component: 'prometheus' }) })
    : undefined;
  const services = {
    storage,
    uploads: new UploadsService(db, { files: filesStore, storageConfigs: storageConfigsStore, uploads: uploadsStore }, storage, { maxBytes: config.maxUploadBytes, mediaTypes: list(config.uploadMediaTypes), ttlSeconds: config.uploadTtl }),
    deployments: new DeploymentsService(db, { deployments: deploymentsStore }, connectorCatalog, box, modelsStore.liveUsingDeployment, kube !== undefined),
    models: new ModelRegistrationService(
      db,
      { models: modelsStore, files: filesStore, deployments: deploymentsStore, aliases: modelAliasesStore, policies: aliasPoliciesStore },
      connectors,
      (trx, ids) => invocationState.abandonQueuedOf(trx, ids, DELETED_BEFORE_RUN),
      compileSchema,
    ),
    offers: new ModelOffersService(db, { models: modelsStore, deployments: deploymentsStore }, connectors),
    catalog,
    aliases,
    aliasPolicies,
    aliasGuards,
    aliasComparison: new AliasComparisonService(db, aliasComparisonStore, () => new Date(now())),
    invocations: new InvocationsService(db, { sessions: sessionsStore, invocations: invocationsStore }, catalog, doorbell, validation, webhooks, aliases, shadows),
    datasets: new DatasetsService(db, { datasets: datasetsStore, storageConfigs: storageConfigsStore, sessions: sessionsStore, invocations: invocationsStore }, catalog, storage, { maxBytes: config.datasetMaxBytes }, webhooks),
    metrics: new MetricsQueryService(db, { workspaces: workspacesStore }, prometheus),
    idempotency,
    webhooks,
  };

  const shutdown = { draining: false, closing };
  // One reader per session, shared by its event streams and by the requests waiting for its invocations.
  const sessionReaders = new SessionEventReaders(db, changeFeed, EVENT_POLL_MS);

  return {
    config,
    logger,
    /** Set on SIGTERM: servers report not ready and close each connection after its answer; `closing` names what has yet to close. */
    shutdown,
    /** The process's change feed (LISTEN), opened on first use. */
    changes: changeFeed,
    /** Session event streams: their slots (apart from the request slots), and one reader per session shared by its streams. */
    eventStreams: {
      slots: new StreamSlots({ perUser: config.maxEventStreamsPerUser, perWorkspace: config.maxEventStreamsPerWorkspace, perProcess: config.maxEventStreams }),
      readers: sessionReaders,
    },
    /** Requests waiting for their invocation (`Prefer: wait`): bounded apart from the request slots, ended at once by a drain. */
    predictionWaits: {
      maxSeconds: config.maxPreferWaitSeconds,
      waits: new PredictionWaits(sessionReaders, { perWorkspace: config.maxPreferWaitsPerWorkspace, perProcess: config.maxPreferWaits }, () => shutdown.draining),
    },
    db,
    keys,
    box,
    tokens,
    authenticator: new Authenticator(db, { apiTokens: apiTokensStore, users: usersStore }, tokens, now, readCache),
    identity,
    /** Who changed what, and who was refused: one record per audited request. */
    audit,
    /** Copies alias sessions' predictions to their shadow versions; counts what it dropped. */
    shadows,
    policy,
    http,
    connectorCatalog,
    connectors,
    proxies,
    queue,
    doorbell,
    sweeper,
    deliverer,
    /** The process's background tasks (those above, the purges, the resync). */
    scheduler,
    metrics,
    services,
    kube,
    now,
    /**
     * Starts the background tasks: the sweeper of
     * invocations, the webhook deliverer, the purges and the guards of traffic policies, once however often
     * it is asked; `close` stops them (the resync is the private server's).
     */
    start() {
      if (started) return;
      started = true;
      sweeper.start();
      deliverer.start((listener) => changeFeed().subscribe('webhooks', listener));
      for (const purge of purges) purge.start();
      guardEvaluation.start();
    },
    async close() {
      // Whatever still waits on a model server, registry, storage endpoint or webhook receiver is cut: no peer holds the process.
      http.close();
      storageClasses.close();
      webhookClient.close();
      prometheus?.close();
      // Every step is tried even when one fails, so a failed drain never leaves the queue or the pool open.
      const failed: string[] = [];
      const step = (name: string, close: () => Promise<unknown> | undefined) =>
        closing.run(name, close).catch((error: unknown) => {
          failed.push(name);
          logger.error({ err: error, step: name }, 'could not close a part of the platform');
        });
      // Side by side: on a loaded host their waits add up past the moment the grace period leaves for closing.
      // Each background task is a step of its own name, its run in progress and what it left (marks, attempts) awaited.
      await Promise.all([
        ...scheduler.tasks().map((task) => step(task.name, () => task.stop())),
        step('validation threads', () => validation.close()),
        step('shadow copies', () => shadows.settled()),
        ...(kube ? [step('kubernetes watches', () => kube.informers.stop())] : []),
      ]);
      // After the tasks: a record one of them made while stopping must reach the database before it closes.
      await step('audit records', () => audit.drain());
      if (!options.queue) await step('queue', () => queue.close());
      if (changes) await step('change feed', () => releaseChangeFeed(db));
      // A database handed in (tests share one) belongs to whoever made it.
      if (!options.db) await step('database pool', () => db.destroy());
      if (failed.length) throw new Error(`could not close: ${failed.join(', ')}`);
    },
  };
}

export type Platform = ReturnType<typeof createPlatform>;

/** Token exchange for workloads: the configured issuers' JWTs, then ServiceAccount tokens reviewed by the Kubernetes API. */
function workloadExchange(config: Config, deps: { db: Db; tokens: TokenService; guard: LoginGuard }): TokenExchangeService {
  const kinds = [new IssuerTokens(config.workloadIssuers, { cooldownMs: config.workloadJwksCooldownSeconds * 1000, timeoutMs: config.upstreamTimeoutMs })];
  const review = config.workloadTokenReview;
  const accounts = review === 'off' ? undefined : new ServiceAccountTokens(config.workloadServiceAccounts, new TokenReviewer(kubeApiOf(review, config.kubeconfig, config.kubeTimeoutMs), config.workloadAudience));
  return new TokenExchangeService({
    ...deps,
    workspaces: workspacesStore,
    principals: new WorkloadPrincipals(deps.db, usersStore),
    kinds: accounts ? [...kinds, accounts] : kinds,
  });
}
