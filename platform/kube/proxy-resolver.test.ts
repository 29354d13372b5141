import { expect } from 'chai';
import type { Runner } from '../../infra/db/database.js';
import type { ConnectorCatalog } from '../../infra/connectors/registry.js';
import type { HttpClient } from '../../infra/net/http-client.js';
import type { KubeConnection } from '../../infra/kube/connection.js';
import { configEntryKey, proxyConfigMapName, proxyConfigSelector, resourceName } from '../../infra/kube/names.js';
import { deploymentEntry, entryText } from '../../infra/kube/proxy-config.js';
import { createLogger } from '../../infra/logging/logger.js';
import { InformerSet } from '../../infra/kube/informer-set.js';
import { collections } from '../../infra/kube/paths.js';
import { ClusterProxyResolver } from './proxy-resolver.js';

type Callback = (arg: unknown) => void;

/** The operator's ConfigMap of workspace acme as client-node's informer shows it: listed at start, then changed or deleted. */
function fakeCluster(data: Record<string, string>, secrets: Record<string, Record<string, string>>) {
  const callbacks: Record<string, Callback[]> = { add: [], update: [], delete: [], error: [] };
  const configMap = (entries: Record<string, string>) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: proxyConfigMapName('proxies', 'acme') }, data: entries });
  const secretReads: string[] = [];
  const informer = {
    on: (verb: string, callback: Callback) => callbacks[verb]!.push(callback),
    list: () => [],
    start: async () => callbacks.add!.forEach((callback) => callback(configMap(data))),
    stop: async () => undefined,
  };
  const api = {
    informer: () => informer,
    core: {
      readNamespacedSecret: async ({ name, namespace }: { name: string; namespace: string }) => {
        secretReads.push(namespace === 'ns-credentials' ? name : `${namespace}/${name}`);
        return { data: Object.fromEntries(Object.entries(secrets[name] ?? {}).map(([key, value]) => [key, Buffer.from(value).toString('base64')])) };
      },
    },
  };
  return {
    kube: { namespace: 'ns', credentialsNamespace: 'ns-credentials', api: async () => api } as unknown as KubeConnection,
    update: (entries: Record<string, string>) => callbacks.update!.forEach((callback) => callback(configMap(entries))),
    remove: () => callbacks.delete!.forEach((callback) => callback(configMap({}))),
    secretReads,
  };
}

/** The deployments and workspaces tables, counting their reads. */
function tables(reads: string[]): Runner {
  const rows: Record<string, Record<number, object>> = { deployments: { 7: { id: 7, workspace_id: 3, deployment_key: 'served' } }, workspaces: { 3: { name: 'acme' } } };
  return ((table: string) => ({ where: ({ id }: { id: number }) => ({ first: async () => (reads.push(`${table}:${id}`), rows[table]![id]) }) })) as unknown as Runner;
}

const name = resourceName('deployment', 'acme', 'served');
const entry = (url: string) => ({
  [configEntryKey('deployment', name)]: entryText(deploymentEntry({ workspace: 'acme', deploymentKey: 'served', registry: { className: 'r', init: {} }, serverProxy: { className: 'p', init: { server_proxy_url: url } }, secretRef: { name: 'creds' } })),
});
const model = (deploymentId: number) => ({ deployment_id: deploymentId, model_code: 'iris', version: '1' });
const catalog = { createServerProxy: (className: string, init: object, options: { deploymentKey: string }) => ({ className, init, deploymentKey: options.deploymentKey }) } as unknown as ConnectorCatalog;

describe('the cluster proxy resolver (Kubernetes mode)', () => {
  function resolver(cluster: ReturnType<typeof fakeCluster>, reads: string[]) {
    const configMaps = InformerSet.of(cluster.kube, createLogger('silent')).informer(collections.configMaps('ns', proxyConfigSelector('proxies')));
    return new ClusterProxyResolver({ kube: cluster.kube, prefix: 'proxies', configMaps, catalog, http: {} as HttpClient, db: tables(reads), logger: createLogger('silent') });
  }

  it('builds the proxy from the operator\'s entry and its Secret, reading the deployment and workspace once', async () => {
    const cluster = fakeCluster(entry('http://a'), { creds: { server_proxy_pat: 'pat' } });
    const reads: string[] = [];
    const proxies = resolver(cluster, reads);
    expect(proxies.synced).to.equal(false);
    await proxies.start();
    expect(proxies.synced).to.equal(true);
    const expected = { className: 'p', init: { server_proxy_url: 'http://a', server_proxy_pat: 'pat' }, deploymentKey: 'served' };
    expect(await proxies.resolve(model(7))).to.deep.equal(expected);
    expect(await proxies.resolve(model(7))).to.deep.equal(expected);
    expect(reads).to.deep.equal(['deployments:7', 'workspaces:3']);
    expect(cluster.secretReads).to.deep.equal(['creds']);
    await proxies.stop();
  });

  it('applies a changed entry to the next call, and refuses, as worth retrying, a deployment without one', async () => {
    const cluster = fakeCluster({}, {});
    const proxies = resolver(cluster, []);
    await proxies.start();
    const missing = (await proxies.resolve(model(7)).catch((caught: unknown) => caught)) as Error & { transient?: boolean };
    expect(missing.message).to.match(/^Deployment "served" has no proxy configuration yet/);
    expect(missing.transient).to.equal(true);
    cluster.update(entry('http://b'));
    expect(await proxies.resolve(model(7))).to.nested.include({ 'init.server_proxy_url': 'http://b' });
    // The operator deletes the workspace's ConfigMap once its last entry goes.
    cluster.remove();
    expect(((await proxies.resolve(model(7)).catch((caught: unknown) => caught)) as { transient?: boolean }).transient).to.equal(true);
    await proxies.stop();
  });

  it('names the model whose deployment no longer exists', async () => {
    const proxies = resolver(fakeCluster({}, {}), []);
    await proxies.start();
    const error = (await proxies.resolve(model(8)).catch((caught: unknown) => caught)) as Error;
    expect(error.message).to.equal('The deployment of iris 1 no longer exists.');
    await proxies.stop();
  });
});
