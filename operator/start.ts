import os from 'node:os';
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { Config } from '../kernel/config/config.js';
import { fence, kubeConnection, type KubeConnection } from '../infra/kube/connection.js';
import { InformerSet } from '../infra/kube/informer-set.js';
import { collections } from '../infra/kube/paths.js';
import { proxyConfigSelector } from '../infra/kube/names.js';
import { ConnectorCatalog } from '../infra/connectors/registry.js';
import { ClusterKServeAccess } from '../infra/connectors/kserve/cluster-access.js';
import { outboundClients } from '../platform/outbound.js';
import { processRegistry } from '../features/metrics/process-registry.js';
import { Controller } from './controller.js';
import { ControllerGroup } from './controller-group.js';
import { EventRecorder } from './events.js';
import { deploymentHandler, storageHandler, type KindHandler } from './kinds.js';
import { LeaderElector } from './leader.js';
import { createOperatorMetrics } from './metrics.js';
import { ProxyConfigMaps } from './proxy-config-maps.js';
import { reconcile } from './reconcile.js';
import { SecretCollector } from './secret-collector.js';
import { SecretWatch } from './secret-watch.js';
import { startOperatorServer } from './server.js';

export interface RunningOperator {
  identity: string;
  url: string;
  isLeader(): boolean;
  close(): Promise<void>;
}

/**
 * The connectors and storage classes the operator validates and probes with.
 * Built here rather than through createPlatform: the operator needs neither
 * the database nor the signing and encryption keys.
 */
function handlers(config: Config, logger: Logger, kserve: ClusterKServeAccess): KindHandler[] {
  const { policy, http, storageClasses } = outboundClients(config, logger);
  return [deploymentHandler(new ConnectorCatalog({ policy, kserve }), http), storageHandler(storageClasses)];
}

/** `didyma operator`: leader election, then one controller per kind while leading; health and metrics always. */
export async function startOperator(config: Config, logger: Logger, connection?: KubeConnection): Promise<RunningOperator> {
  const kube = connection ?? kubeConnection(config);
  if (!kube) throw new Error('didyma operator needs a cluster: set DIDYMA_KUBE_MODE to in-cluster or kubeconfig.');
  const identity = `${os.hostname()}_${randomUUID().slice(0, 8)}`;
  const log = logger.child({ component: 'operator', identity, namespace: kube.namespace });
  const metrics = createOperatorMetrics();
  const elector = config.leaderElection ? new LeaderElector({ kube, name: config.leaseName, identity, leaseSeconds: config.leaseSeconds, logger: log }) : undefined;
  // Every write of a reconcile is refused once this replica is no longer the leader.
  const fenced = fence(kube, () => {
    if (elector && !elector.isLeader) throw new Error('not the leader any more: write refused');
  });
  // One list+watch per collection for the process, kept across terms of leadership (reads need no fence).
  const informers = InformerSet.of(kube, log);
  const proxyConfigMaps = collections.configMaps(kube.namespace, proxyConfigSelector(config.proxyConfigMap));
  const configMaps = new ProxyConfigMaps(fenced, config.proxyConfigMap, informers.informer(proxyConfigMaps), log);
  const events = new EventRecorder(fenced, identity, log);
  const probeIntervalMs = config.operatorProbeSeconds * 1000;
  const secrets = informers.informer(collections.secrets(kube.credentialsNamespace));
  const group = new ControllerGroup(
    () => {
      const kinds = handlers(config, log, new ClusterKServeAccess(config.kserveNamespaces, kube, informers)).map((handler) => ({ handler, resources: informers.informer(collections.resources(handler.kind, kube.namespace)) }));
      const collector = new SecretCollector({ secrets, users: kinds, kube: fenced, graceMs: config.operatorSecretGraceSeconds * 1000, logger: log });
      const users = kinds.map(({ handler, resources }) => ({
        handler,
        controller: new Controller({
          informer: resources,
          kind: handler.kind,
          reconcile: (name) => reconcile({ kube: fenced, handler, configMaps, secrets: collector, events, logger: log, probeIntervalMs }, name),
          logger: log,
          metrics,
          workers: config.operatorWorkers,
          retryBaseMs: config.operatorRetryMs,
          maxBackoffMs: probeIntervalMs,
        }),
      }));
      return [...users.map((user) => user.controller), new SecretWatch(secrets, users), configMaps, collector];
    },
    log,
    (running) => metrics.leader.set(running ? 1 : 0),
  );

  const server = await startOperatorServer({
    host: config.bindHost,
    port: config.operatorPort,
    logger: log,
    metrics: [{ registry: metrics.registry }, { registry: processRegistry() }],
    metricsToken: config.metricsToken,
    ready: async () => {
      const api = await kube.api();
      await api.core.listNamespacedConfigMap({ namespace: kube.namespace, labelSelector: proxyConfigMaps.labelSelector, limit: 1 });
    },
  });

  if (elector) elector.start({ onStartedLeading: async () => group.begin(), onStoppedLeading: () => group.end() });
  else group.begin();
  log.info({ url: server.url, leaderElection: Boolean(elector) }, 'operator started');

  return {
    identity,
    url: server.url,
    isLeader: () => (elector ? elector.isLeader : true),
    async close() {
      // The elector ends the group when it steps down; without one, end it here.
      if (elector) await elector.stop();
      await group.end();
      await informers.stop();
      await server.close();
    },
  };
}
