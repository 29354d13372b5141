import { expect } from 'chai';
import type { DesiredDeployment } from './desired.js';
import { customResource, type KubeObject } from './resources.js';
import { planResync, type Removal } from './resync-plan.js';

const NOW = Date.parse('2026-01-01T12:00:00Z');
const GRACE = 60_000;
const OLD = new Date(NOW - 10 * 60_000);
const FRESH = new Date(NOW - 5_000);
const NAMESPACES = { namespace: 'ns', credentialsNamespace: 'ns-credentials' };
const NONE = { desired: [], removals: [] };

const desired = (key: string, secrets: Record<string, string> = {}, credentialsVersion?: string): DesiredDeployment => ({
  kind: 'deployment',
  workspace: 'default',
  key,
  registry: { className: 'didyma.registry.OpenInferenceRegistryConnector', init: { model_registry_url: 'http://r.example' } },
  serverProxy: { className: 'didyma.proxy.OpenInferenceServerProxy', init: { server_proxy_url: 'http://s.example' } },
  secrets,
  ...(credentialsVersion ? { credentialsVersion } : {}),
});

/** What the API server would return for an applied object. */
const applied = (object: KubeObject, created = OLD, extra: Partial<KubeObject['metadata']> = {}): KubeObject => ({
  ...object,
  metadata: { ...object.metadata, creationTimestamp: created, uid: 'u', resourceVersion: '1', labels: { ...object.metadata.labels, 'other.example/label': 'kept' }, ...extra },
});

describe('resync plan', () => {
  it('leaves resources in sync alone, their Secrets unread', () => {
    const item = desired('a', { server_proxy_pat: 'p' }, 'v1');
    const plan = planResync({ desired: [item], removals: [] }, { resources: [applied(customResource(item, 'ns'))] }, NAMESPACES, NOW, GRACE);
    expect(plan).to.deep.equal({ apply: [], inSync: [item], deleteResources: [], removed: [], removing: [] });
  });

  it('applies missing resources, edited specs and changed credentials (told by the Secret version the resource names)', () => {
    const missing = desired('missing');
    const edited = desired('edited');
    const rotated = desired('rotated', { server_proxy_pat: 'new' }, 'v2');
    const editedObject = structuredClone(applied(customResource(edited, 'ns')));
    (editedObject.spec as { serverProxy: { init: Record<string, string> } }).serverProxy.init = { server_proxy_url: 'http://elsewhere.example' };
    const before = applied(customResource({ ...rotated, secrets: { server_proxy_pat: 'old' }, credentialsVersion: 'v1' }, 'ns'));
    const plan = planResync({ desired: [missing, edited, rotated], removals: [] }, { resources: [editedObject, before] }, NAMESPACES, NOW, GRACE);
    expect(plan.apply.map((d) => d.key)).to.deep.equal(['missing', 'edited', 'rotated']);
  });

  it('applies again a resource whose credentials were removed', () => {
    const item = desired('plain');
    const plan = planResync({ desired: [item], removals: [] }, { resources: [applied(customResource({ ...item, secrets: { server_proxy_pat: 'p' }, credentialsVersion: 'v1' }, 'ns'))] }, NAMESPACES, NOW, GRACE);
    expect(plan.apply).to.deep.equal([item]);
  });

  it('applies again a resource being deleted that the database still wants', () => {
    const item = desired('back');
    const plan = planResync({ desired: [item], removals: [] }, { resources: [applied(customResource(item, 'ns'), OLD, { deletionTimestamp: FRESH })] }, NAMESPACES, NOW, GRACE);
    expect(plan.apply).to.have.length(1);
  });

  it('deletes resources nobody wants (the operator deletes their Secrets), once past the grace period', () => {
    const gone = desired('gone', { server_proxy_pat: 'p' }, 'v1');
    const young = desired('young');
    const plan = planResync(NONE, { resources: [applied(customResource(gone, 'ns')), applied(customResource(young, 'ns'), FRESH)] }, NAMESPACES, NOW, GRACE);
    expect(plan.deleteResources).to.deep.equal([{ kind: 'deployment', name: customResource(gone, 'ns').metadata.name }]);
  });

  it('ages an object by its creation time, a Date or the string client-node leaves in listed custom resources', () => {
    for (const [created, deleted] of [[OLD, 1], [OLD.toISOString(), 1], [FRESH.toISOString(), 0]] as const) {
      const plan = planResync(NONE, { resources: [applied(customResource(desired('x'), 'ns'), created as Date)] }, NAMESPACES, NOW, GRACE);
      expect(plan.deleteResources, String(created)).to.have.length(deleted);
    }
  });

  it('does not delete a resource already being deleted', () => {
    const plan = planResync(NONE, { resources: [applied(customResource(desired('x'), 'ns'), OLD, { deletionTimestamp: FRESH })] }, NAMESPACES, NOW, GRACE);
    expect(plan.deleteResources).to.deep.equal([]);
  });

  describe('of deleted rows', () => {
    const removal = (key: string): Removal => ({ kind: 'deployment', workspace: 'default', key });

    it('deletes the resource of a deleted row at once, however young, and keeps the row removing', () => {
      const item = desired('young', { server_proxy_pat: 'p' }, 'v1');
      const plan = planResync({ desired: [], removals: [removal('young')] }, { resources: [applied(customResource(item, 'ns'), FRESH)] }, NAMESPACES, NOW, GRACE);
      expect(plan.deleteResources).to.deep.equal([{ kind: 'deployment', name: customResource(item, 'ns').metadata.name }]);
      expect(plan.removing).to.deep.equal([removal('young')]);
      expect(plan.removed).to.deep.equal([]);
    });

    it('waits for a resource being finalized without deleting it again', () => {
      const item = desired('held', { server_proxy_pat: 'p' }, 'v1');
      const plan = planResync({ desired: [], removals: [removal('held')] }, { resources: [applied(customResource(item, 'ns'), OLD, { deletionTimestamp: FRESH })] }, NAMESPACES, NOW, GRACE);
      expect(plan.deleteResources).to.deep.equal([]);
      expect(plan.removing).to.have.length(1);
    });

    it('counts a row removed once its resource is gone', () => {
      const plan = planResync({ desired: [], removals: [removal('gone')] }, { resources: [] }, NAMESPACES, NOW, GRACE);
      expect(plan).to.deep.include({ removed: [removal('gone')], removing: [], deleteResources: [] });
    });

    it('leaves a resource a live row of the same key wants (a storage key used again) and counts the old row removed', () => {
      const item = desired('again');
      const plan = planResync({ desired: [item], removals: [removal('again')] }, { resources: [applied(customResource(item, 'ns'))] }, NAMESPACES, NOW, GRACE);
      expect(plan).to.deep.include({ inSync: [item], removed: [removal('again')], removing: [], deleteResources: [] });
    });
  });
});
