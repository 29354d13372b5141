import { expect } from 'chai';
import type { KubeConnection } from './connection.js';
import { createLogger } from '../logging/logger.js';
import { InformerSet } from './informer-set.js';
import { collections } from './paths.js';
import type { KubeObject } from './resources.js';

type Callback = (arg: unknown) => void;

/** An API whose informers are client-node's as far as InformerSet sees them, counting the watches it opens (one per start) and the lists. */
function fakeApi(items: KubeObject[]) {
  const calls = { watches: [] as string[], lists: [] as string[], stops: 0 };
  const api = {
    list: async (_apiVersion: string, kind: string, namespace: string, selectors: { labelSelector?: string }) => {
      calls.lists.push(`${kind} ${namespace} ${selectors.labelSelector ?? ''}`.trim());
      return { items };
    },
    informer: (path: string, list: () => Promise<{ items: KubeObject[] }>, selectors: { labelSelector?: string }) => {
      const callbacks: Record<string, Callback[]> = { add: [], update: [], delete: [], error: [] };
      let cached: KubeObject[] = [];
      return {
        on: (verb: string, callback: Callback) => callbacks[verb]!.push(callback),
        list: () => cached,
        get: (name: string) => cached.find((o) => o.metadata.name === name),
        async start() {
          cached = (await list()).items;
          cached.forEach((object) => callbacks.add!.forEach((callback) => callback(object)));
          calls.watches.push(`${path}?${selectors.labelSelector ?? ''}`);
        },
        async stop() {
          calls.stops += 1;
        },
      };
    },
  };
  return { kube: { namespace: 'ns', credentialsNamespace: 'ns', api: async () => api } as unknown as KubeConnection, calls };
}

const configMap = (name: string): KubeObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'ns' } });

describe('shared informers', () => {
  it('gives two users of one collection one list and one watch, each told of every object', async () => {
    const { kube, calls } = fakeApi([configMap('a'), configMap('b')]);
    const set = InformerSet.of(kube, createLogger('silent'));
    const seen: Record<string, string[]> = { resolver: [], operator: [] };
    for (const user of ['resolver', 'operator']) {
      const informer = set.informer<KubeObject>(collections.configMaps('ns', 'didyma.io/proxy-config=p'));
      informer.subscribe((name) => seen[user]!.push(name));
      await informer.whenSynced();
    }
    expect(calls.watches).to.deep.equal(['/api/v1/namespaces/ns/configmaps?didyma.io/proxy-config=p']);
    expect(calls.lists).to.deep.equal(['ConfigMap ns didyma.io/proxy-config=p']);
    // The second came after the first list: the cache is replayed to it.
    expect(seen).to.deep.equal({ resolver: ['a', 'b'], operator: ['a', 'b'] });
    expect(set.informer(collections.configMaps('ns', 'didyma.io/proxy-config=p')).get('b')?.metadata.name).to.equal('b');
    await set.stop();
    expect(calls.stops).to.equal(1);
  });

  it('watches another namespace or selector apart, and tells an unsubscribed user nothing more', async () => {
    const { kube, calls } = fakeApi([configMap('a')]);
    const set = InformerSet.of(kube, createLogger('silent'));
    const seen: string[] = [];
    const unsubscribe = set.informer(collections.configMaps('ns')).subscribe((name) => seen.push(name));
    unsubscribe();
    await Promise.all([set.informer(collections.configMaps('ns')).whenSynced(), set.informer(collections.configMaps('ns', 'x=y')).whenSynced(), set.informer(collections.secrets('ns')).whenSynced()]);
    expect(calls.watches.sort()).to.deep.equal(['/api/v1/namespaces/ns/configmaps?', '/api/v1/namespaces/ns/configmaps?x=y', '/api/v1/namespaces/ns/secrets?']);
    expect(seen).to.deep.equal([]);
    await set.stop();
  });

  it('lets a later wait start again an informer whose first list failed', async () => {
    const { kube, calls } = fakeApi([]);
    let refuse = true;
    const set = InformerSet.of({ ...kube, api: async () => {
      const api = await kube.api();
      if (refuse) throw new Error('the CRDs are not installed');
      return api;
    } }, createLogger('silent'));
    const informer = set.informer(collections.resources('deployment', 'ns'));
    const error = await informer.whenSynced().catch((e: unknown) => e);
    expect((error as Error).message).to.equal('the CRDs are not installed');
    refuse = false;
    await informer.whenSynced();
    expect([informer.hasSynced, calls.watches.length]).to.deep.equal([true, 1]);
    await set.stop();
  });
});
