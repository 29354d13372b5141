import type { Logger } from 'pino';
import type { Config } from '../../kernel/config/config.js';
import type { Db } from '../db/database.js';
import type { SecretBox } from '../crypto/secrets.js';
import type { ConnectorCatalog } from '../connectors/registry.js';
import type { HttpClient } from '../net/http-client.js';
import { kubeConnection, type KubeConnection } from './connection.js';
import { kubeListeners } from './listeners.js';
import { ClusterProxyResolver } from './proxy-resolver.js';
import { DesiredStateResync } from './resync.js';
import { DesiredStateWriter } from './writer.js';

export interface KubeSide {
  connection: KubeConnection;
  writer: DesiredStateWriter;
  listeners: ReturnType<typeof kubeListeners>;
  /** Started by the private server (the process that writes resources). */
  resync: DesiredStateResync;
  /** For executors: the operator's proxy configuration, followed live. */
  proxyResolver(deps: { catalog: ConnectorCatalog; http: HttpClient }): ClusterProxyResolver;
}

/** The Kubernetes side of a platform process, or undefined in the embedded default. */
export function createKubeSide(config: Config, deps: { db: Db; box: SecretBox; logger: Logger }): KubeSide | undefined {
  const connection = kubeConnection(config);
  if (!connection) return undefined;
  const logger = deps.logger.child({ component: 'kube', namespace: connection.namespace });
  const writer = new DesiredStateWriter(connection, logger);
  return {
    connection,
    writer,
    listeners: kubeListeners(writer, deps.box, logger),
    resync: new DesiredStateResync(deps.db, deps.box, connection, writer, logger.child({ task: 'resync' }), { intervalMs: config.kubeResyncSeconds * 1000 }),
    proxyResolver: ({ catalog, http }) => new ClusterProxyResolver({ kube: connection, configMap: config.proxyConfigMap, catalog, http, db: deps.db, logger: logger.child({ task: 'proxy-config' }) }),
  };
}
