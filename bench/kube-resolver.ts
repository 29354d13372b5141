// The executor's side of `make bench-kube` (bench/kube-config.ts), one child
// process: the ClusterProxyResolver executors run, over the process's shared
// informer of the proxy ConfigMaps, through the counting proxy KUBECONFIG
// names. It resolves every deployment of BENCH_DEPLOYMENTS_FILE until all
// resolve, and answers GET /status with what it saw and its memory. The
// deployments' rows come from that file, not PostgreSQL: the bench measures
// the cluster side.
import fs from 'node:fs';
import http from 'node:http';
import type { Runner } from '../infra/db/database.js';
import { kubeConnection } from '../infra/kube/connection.js';
import { InformerSet } from '../infra/kube/informer-set.js';
import { proxyConfigSelector } from '../infra/kube/names.js';
import { collections } from '../infra/kube/paths.js';
import { parseEntries } from '../infra/kube/proxy-config.js';
import type { KubeObject } from '../infra/kube/resources.js';
import { ConnectorCatalog } from '../infra/connectors/registry.js';
import { createLogger } from '../infra/logging/logger.js';
import { loadConfig } from '../kernel/config/config.js';
import { outboundClients } from '../platform/outbound.js';
import { ClusterProxyResolver } from '../platform/kube/proxy-resolver.js';

export interface BenchDeployment {
  id: number;
  workspaceId: number;
  workspace: string;
  key: string;
}

export interface ResolverStatus {
  total: number;
  resolved: number;
  /** Epoch ms when the last one resolved. */
  allResolvedAt?: number;
  /** Deployment entries in the informer's cache, and those whose server URL carries BENCH_UPDATED_MARK. */
  entries: number;
  updated: number;
  /** Epoch ms of the last change of either count. */
  lastChangeAt?: number;
  heapUsed: number;
  rss: number;
}

type ConfigMap = KubeObject & { data?: Record<string, string> };

const config = loadConfig();
const logger = createLogger(config.logLevel);
const deployments = JSON.parse(fs.readFileSync(process.env.BENCH_DEPLOYMENTS_FILE!, 'utf8')) as BenchDeployment[];
const mark = process.env.BENCH_UPDATED_MARK ?? '/updated';

/** The two lookups the resolver makes, answered from the file. */
function tables(): Runner {
  const rows: Record<string, Map<number, object>> = {
    deployments: new Map(deployments.map((d) => [d.id, { id: d.id, workspace_id: d.workspaceId, deployment_key: d.key }])),
    workspaces: new Map(deployments.map((d) => [d.workspaceId, { name: d.workspace }])),
  };
  return ((table: string) => ({ where: ({ id }: { id: number }) => ({ first: async () => rows[table]!.get(id) }) })) as unknown as Runner;
}

const kube = kubeConnection(config)!;
const informers = InformerSet.of(kube, logger);
const configMaps = informers.informer<ConfigMap>(collections.configMaps(kube.namespace, proxyConfigSelector(config.proxyConfigMap)));
const { policy, http: client } = outboundClients(config, logger);
const resolver = new ClusterProxyResolver({ kube, prefix: config.proxyConfigMap, configMaps, catalog: new ConnectorCatalog({ policy }), http: client, db: tables(), logger });

const status: ResolverStatus = { total: deployments.length, resolved: 0, entries: 0, updated: 0, heapUsed: 0, rss: 0 };
// A second user of the same informer (one watch for both): what its cache holds, as changes arrive.
const counted = new Map<string, { entries: number; updated: number }>();
configMaps.subscribe((name, configMap) => {
  const entries = [...parseEntries(configMap?.data).entries.values()].filter((entry) => entry.kind === 'ModelDeployment');
  counted.set(name, { entries: entries.length, updated: entries.filter((entry) => entry.serverProxy.init.server_proxy_url?.includes(mark)).length });
  const sum = (field: 'entries' | 'updated') => [...counted.values()].reduce((total, count) => total + count[field], 0);
  const [entriesNow, updatedNow] = [sum('entries'), sum('updated')];
  if (entriesNow !== status.entries || updatedNow !== status.updated) status.lastChangeAt = Date.now();
  Object.assign(status, { entries: entriesNow, updated: updatedNow });
});
await resolver.start();

async function resolveAll(): Promise<void> {
  let pending = deployments;
  while (pending.length) {
    const left: BenchDeployment[] = [];
    for (const d of pending) {
      await resolver.resolve({ deployment_id: d.id, model_code: 'm', version: '1' }).catch(() => left.push(d));
    }
    status.resolved = deployments.length - left.length;
    pending = left;
    if (pending.length) await new Promise((resolve) => setTimeout(resolve, 250));
  }
  status.allResolvedAt = Date.now();
}

const server = http.createServer((_req, res) => {
  const memory = process.memoryUsage();
  res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ ...status, heapUsed: memory.heapUsed, rss: memory.rss }));
});
server.listen(Number(process.env.BENCH_RESOLVER_PORT), '127.0.0.1');
process.once('SIGTERM', () => {
  server.close();
  void informers.stop().then(() => process.exit(0));
});
void resolveAll();
