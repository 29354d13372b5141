import { expect } from 'chai';
import type { KubeConnection } from '../infra/kube/connection.js';
import { LABELS, MANAGED_BY, type ResourceKind } from '../infra/kube/constants.js';
import type { SharedInformer } from '../infra/kube/informer-set.js';
import type { KubeObject } from '../infra/kube/resources.js';
import { createLogger } from '../infra/logging/logger.js';
import { SecretCollector } from './secret-collector.js';

const NOW = Date.parse('2026-06-01T12:00:00Z');
const GRACE_MS = 60_000;
const OLD = new Date(NOW - 10 * GRACE_MS);
const YOUNG = new Date(NOW - 1000);

const secret = (name: string, created: Date, labels: Record<string, string> = {}): KubeObject => ({ apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace: 'ns-credentials', creationTimestamp: created, labels } });
const versioned = (resource: string, version: string, created = OLD, kind: ResourceKind = 'deployment') => secret(`${resource}-credentials-${version}`, created, { [LABELS.managedBy]: MANAGED_BY, [LABELS.kind]: kind, [LABELS.resource]: resource });
const resource = (name: string, secretRef?: string, deleting = false): KubeObject & { spec: unknown } => ({
  apiVersion: 'didyma.io/v1alpha1',
  kind: 'ModelDeployment',
  metadata: { name, ...(deleting ? { deletionTimestamp: YOUNG } : {}) },
  spec: secretRef ? { secretRef: { name: secretRef } } : {},
});

/** The collector over Secrets and resources as the API server has them (`cached`: as the operator's cache has them); what it deleted, in order, and what it read. */
function collectorOver(secrets: KubeObject[], resources: Array<KubeObject & { spec: unknown }>, cached = resources) {
  const deleted: string[] = [];
  const reads: string[] = [];
  const secretCache = { list: () => secrets.filter((s) => !deleted.includes(s.metadata.name)), whenSynced: async () => undefined } as unknown as SharedInformer<KubeObject>;
  const resourceCache = { get: (name: string) => cached.find((r) => r.metadata.name === name), whenSynced: async () => undefined } as unknown as SharedInformer<KubeObject>;
  const objects = {
    read: async (ref: KubeObject) => {
      reads.push(ref.metadata.name);
      const found = resources.find((r) => r.metadata.name === ref.metadata.name);
      if (!found) throw Object.assign(new Error('HTTP 404'), { code: 404 });
      return found;
    },
    delete: async (ref: KubeObject) => {
      if (deleted.includes(ref.metadata.name)) throw Object.assign(new Error('HTTP 404'), { code: 404 });
      deleted.push(ref.metadata.name);
    },
  };
  const kube = { namespace: 'ns', credentialsNamespace: 'ns-credentials', api: async () => ({ objects }) } as unknown as KubeConnection;
  const handler = { kind: 'deployment' as const, secretName: (spec: unknown) => (spec as { secretRef?: { name: string } }).secretRef?.name };
  const collector = new SecretCollector({ secrets: secretCache, users: [{ handler, resources: resourceCache }], kube, graceMs: GRACE_MS, logger: createLogger('silent'), now: () => NOW });
  return { collector, deleted, reads };
}

describe('the operator’s collection of credentials Secrets', () => {
  it('sweeps the versions no resource names once past the grace period, and nothing else', async () => {
    const current = versioned('a', 'v2');
    const superseded = versioned('a', 'v1');
    const justCreated = versioned('a', 'v3', YOUNG);
    const ofGone = versioned('gone', 'v1');
    const ofDeleting = versioned('leaving', 'v1');
    const unversioned = secret('a-credentials', OLD, { [LABELS.managedBy]: MANAGED_BY, [LABELS.kind]: 'deployment' });
    const notOurs = secret('someone-elses', OLD);
    const otherKind = versioned('a', 'v9', OLD, 'storage');
    const { collector, deleted } = collectorOver([current, superseded, justCreated, ofGone, ofDeleting, unversioned, notOurs, otherKind], [resource('a', current.metadata.name), resource('leaving', ofDeleting.metadata.name, true)]);
    expect(await collector.sweep()).to.equal(4);
    expect(deleted.sort()).to.deep.equal([superseded, ofGone, ofDeleting, unversioned].map((s) => s.metadata.name).sort());
    expect(await collector.sweep(), 'a second sweep finds nothing more').to.equal(0);
  });

  it('keeps the Secrets their resources name, reading none of them when the cache names them too', async () => {
    const named = versioned('a', 'v2');
    const { collector, deleted, reads } = collectorOver([named], [resource('a', named.metadata.name)]);
    await collector.sweep();
    expect(deleted).to.deep.equal([]);
    expect(reads, 'a Secret in use costs no read').to.deep.equal([]);
  });

  it('reads the resource afresh before deleting, and keeps a Secret its cache has not seen it name yet', async () => {
    const moved = versioned('a', 'v2');
    const { collector, deleted, reads } = collectorOver([moved], [resource('a', moved.metadata.name)], [resource('a', 'a-credentials-v1')]);
    await collector.sweep();
    expect(reads).to.deep.equal(['a']);
    expect(deleted).to.deep.equal([]);
  });

  it('releases a deleted resource’s Secrets created up to its deletion, not one made for a new resource of its name', async () => {
    const deletedAt = new Date(NOW - 5000);
    const before = versioned('a', 'v1', new Date(NOW - 60_000));
    const atDeletion = versioned('a', 'v2', deletedAt);
    const after = versioned('a', 'v3', YOUNG);
    const other = versioned('b', 'v1');
    const { collector, deleted } = collectorOver([before, atDeletion, after, other], []);
    await collector.release('deployment', 'a', deletedAt);
    expect(deleted).to.deep.equal([before.metadata.name, atDeletion.metadata.name]);
  });
});
