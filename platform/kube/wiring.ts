import type { Logger } from 'pino';
import type { Config } from '../../kernel/config/config.js';
import type { Db } from '../../infra/db/database.js';
import type { SecretBox } from '../../infra/crypto/secrets.js';
import type { ConnectorCatalog } from '../../infra/connectors/registry.js';
import type { HttpClient } from '../../infra/net/http-client.js';
import { kubeConnection, type KubeConnection } from '../../infra/kube/connection.js';
import { ClusterKServeAccess } from '../../infra/connectors/kserve/cluster-access.js';
import { InformerSet } from '../../infra/kube/informer-set.js';
import { collections } from '../../infra/kube/paths.js';
import { proxyConfigSelector } from '../../infra/kube/names.js';
import type { Scheduler } from '../../infra/process/scheduler.js';
import type { ChangeFeed } from '../../infra/db/change-feed.js';
import type { ClusterWriteObserver } from '../../features/metrics/cluster-metrics.js';
import { DesiredStateWriter } from '../../infra/kube/writer.js';
import { ClusterProxyResolver } from './proxy-resolver.js';
import { DesiredStateResync } from './resync.js';
import { KServeRevisionFollower } from './revision-follower.js';
import { KServeServingStates } from './serving-states.js';
import { servingStatesStore } from '../../features/models/serving-states.store.js';
import { deploymentsStore } from '../../features/deployments/store.js';
import type { ModelRevisionsService } from '../../features/models/revisions.service.js';

/** The process's cluster: its connection and its list+watches, one per collection (stopped when the platform closes). */
export interface KubeCluster {
  connection: KubeConnection;
  informers: InformerSet;
  /** What the KServe connector classes read, through the same informers. */
  kserve: ClusterKServeAccess;
}

export interface KubeSide extends KubeCluster {
  writer: DesiredStateWriter;
  /** The one writer of the custom resources: started by the private server. */
  resync: DesiredStateResync;
  /** For executors: the operator's proxy configuration, followed live once started. */
  proxies: ClusterProxyResolver;
  /** The one registrar of KServe revisions (`versioning: revision`): started by the private server. */
  revisions: KServeRevisionFollower;
  /** The one writer of the KServe services' states a model's page shows: started by the private server. */
  servingStates: KServeServingStates;
  /** Starts what only the private server runs: the resync, the follower of revisions and the serving states. */
  startPrivateTasks(): void;
}

export interface KubeSideDeps {
  db: Db;
  box: SecretBox;
  catalog: ConnectorCatalog;
  http: HttpClient;
  logger: Logger;
  /** The platform's background tasks: the resync is one. */
  scheduler: Scheduler;
  /** The process's change feed, whose announcements after each commit wake the resync. */
  changes: () => ChangeFeed;
  observer?: ClusterWriteObserver;
  /** What registers a model's new version by itself. */
  revisions: ModelRevisionsService;
}

/** The cluster of a platform process, or undefined in the embedded default: made before the connector catalog, which reads it. */
export function kubeCluster(config: Config, parent: Logger): KubeCluster | undefined {
  const connection = kubeConnection(config);
  if (!connection) return undefined;
  const informers = InformerSet.of(connection, parent.child({ component: 'kube', namespace: connection.namespace }));
  return { connection, informers, kserve: new ClusterKServeAccess(config.kserveNamespaces, connection, informers) };
}

/** The Kubernetes side of a platform process on its cluster. */
export function createKubeSide(config: Config, cluster: KubeCluster, deps: KubeSideDeps): KubeSide {
  const { connection, informers } = cluster;
  const logger = deps.logger.child({ component: 'kube', namespace: connection.namespace });
  const writer = new DesiredStateWriter(connection, logger);
  const configMaps = informers.informer(collections.configMaps(connection.namespace, proxyConfigSelector(config.proxyConfigMap)));
  const wakeups = (wake: () => void) => deps.changes().subscribeCommitted('desired_state', wake);
  const resync = new DesiredStateResync({ ...deps, kube: connection, writer, logger: logger.child({ task: 'resync' }), wakeups }, { intervalMs: config.kubeResyncSeconds * 1000 });
  // Both follow the InferenceServices of every opened namespace, after each change and every resync interval.
  const watching = { ...deps, informers, grants: config.kserveNamespaces, intervalMs: config.kubeResyncSeconds * 1000 };
  const revisions = new KServeRevisionFollower({ ...watching, deployments: deploymentsStore, logger: logger.child({ task: 'kserve-revisions' }), wakeups });
  const servingStates = new KServeServingStates({ ...watching, store: servingStatesStore, logger: logger.child({ task: 'kserve-serving-states' }) });
  return {
    ...cluster,
    writer,
    resync,
    revisions,
    servingStates,
    startPrivateTasks: () => {
      resync.start();
      revisions.start();
      servingStates.start();
    },
    proxies: new ClusterProxyResolver({ kube: connection, prefix: config.proxyConfigMap, configMaps, catalog: deps.catalog, http: deps.http, db: deps.db, logger: logger.child({ task: 'proxy-config' }) }),
  };
}
