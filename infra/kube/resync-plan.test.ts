import { expect } from 'chai';
import type { DesiredDeployment } from './desired.js';
import { customResource, credentialsSecret, type KubeObject } from './resources.js';
import { planResync, type Removal } from './resync-plan.js';

const NOW = Date.parse('2026-01-01T12:00:00Z');
const GRACE = 60_000;
const OLD = new Date(NOW - 10 * 60_000);
const FRESH = new Date(NOW - 5_000);
const NAMESPACES = { namespace: 'ns', credentialsNamespace: 'ns-credentials' };
const NONE = { desired: [], removals: [] };

const desired = (key: string, secrets: Record<string, string> = {}): DesiredDeployment => ({
  kind: 'deployment',
  workspace: 'default',
  key,
  registry: { className: 'didyma.registry.OpenInferenceRegistryConnector', init: { model_registry_url: 'http://r.example' } },
  serverProxy: { className: 'didyma.proxy.OpenInferenceServerProxy', init: { server_proxy_url: 'http://s.example' } },
  secrets,
});

/** What the API server would return for an applied object. */
const applied = (object: KubeObject, created = OLD, extra: Partial<KubeObject['metadata']> = {}): KubeObject => ({
  ...object,
  metadata: { ...object.metadata, creationTimestamp: created, uid: 'u', resourceVersion: '1', labels: { ...object.metadata.labels, 'other.example/label': 'kept' }, ...extra },
});

describe('resync plan', () => {
  it('leaves resources in sync alone', () => {
    const item = desired('a', { server_proxy_pat: 'p' });
    const plan = planResync({ desired: [item], removals: [] }, { resources: [applied(customResource(item, 'ns'))], secrets: [applied(credentialsSecret(item, 'ns-credentials')!)] }, NAMESPACES, NOW, GRACE);
    expect(plan).to.deep.equal({ apply: [], inSync: [item], deleteResources: [], deleteSecrets: [], removed: [], removing: [] });
  });

  it('applies missing resources, edited specs and changed credentials', () => {
    const missing = desired('missing');
    const edited = desired('edited');
    const rotated = desired('rotated', { server_proxy_pat: 'new' });
    const editedObject = structuredClone(applied(customResource(edited, 'ns')));
    (editedObject.spec as { serverProxy: { init: Record<string, string> } }).serverProxy.init = { server_proxy_url: 'http://elsewhere.example' };
    const plan = planResync(
      { desired: [missing, edited, rotated], removals: [] },
      { resources: [editedObject, applied(customResource(rotated, 'ns'))], secrets: [applied(credentialsSecret({ ...rotated, secrets: { server_proxy_pat: 'old' } }, 'ns-credentials')!)] },
      NAMESPACES,
      NOW,
      GRACE,
    );
    expect(plan.apply.map((d) => d.key)).to.deep.equal(['missing', 'edited', 'rotated']);
  });

  it('applies again a resource being deleted that the database still wants', () => {
    const item = desired('back');
    const plan = planResync({ desired: [item], removals: [] }, { resources: [applied(customResource(item, 'ns'), OLD, { deletionTimestamp: FRESH })], secrets: [] }, NAMESPACES, NOW, GRACE);
    expect(plan.apply).to.have.length(1);
  });

  it('deletes resources and Secrets nobody wants, once past the grace period', () => {
    const gone = desired('gone', { server_proxy_pat: 'p' });
    const young = desired('young');
    const orphanSecret = credentialsSecret(desired('orphan', { server_proxy_pat: 'p' }), 'ns-credentials')!;
    const plan = planResync(
      NONE,
      { resources: [applied(customResource(gone, 'ns')), applied(customResource(young, 'ns'), FRESH)], secrets: [applied(credentialsSecret(gone, 'ns-credentials')!), applied(orphanSecret)] },
      NAMESPACES,
      NOW,
      GRACE,
    );
    expect(plan.deleteResources).to.deep.equal([{ kind: 'deployment', name: customResource(gone, 'ns').metadata.name }]);
    // The Secret of a deleted resource goes with it; only the orphan is deleted on its own.
    expect(plan.deleteSecrets).to.deep.equal([orphanSecret.metadata.name]);
  });

  it('ages an object by its creation time, a Date or the string client-node leaves in listed custom resources', () => {
    for (const [created, deleted] of [[OLD, 1], [OLD.toISOString(), 1], [FRESH.toISOString(), 0]] as const) {
      const plan = planResync(NONE, { resources: [applied(customResource(desired('x'), 'ns'), created as Date)], secrets: [] }, NAMESPACES, NOW, GRACE);
      expect(plan.deleteResources, String(created)).to.have.length(deleted);
    }
  });

  it('does not delete a resource already being deleted', () => {
    const plan = planResync(NONE, { resources: [applied(customResource(desired('x'), 'ns'), OLD, { deletionTimestamp: FRESH })], secrets: [] }, NAMESPACES, NOW, GRACE);
    expect(plan.deleteResources).to.deep.equal([]);
  });

  describe('of deleted rows', () => {
    const removal = (key: string): Removal => ({ kind: 'deployment', workspace: 'default', key });

    it('deletes the resource of a deleted row at once, however young, and keeps the row removing', () => {
      const item = desired('young', { server_proxy_pat: 'p' });
      const plan = planResync({ desired: [], removals: [removal('young')] }, { resources: [applied(customResource(item, 'ns'), FRESH)], secrets: [applied(credentialsSecret(item, 'ns-credentials')!, FRESH)] }, NAMESPACES, NOW, GRACE);
      expect(plan.deleteResources).to.deep.equal([{ kind: 'deployment', name: customResource(item, 'ns').metadata.name }]);
      // Its Secret goes with the resource.
      expect(plan.deleteSecrets).to.deep.equal([]);
      expect(plan.removing).to.deep.equal([removal('young')]);
      expect(plan.removed).to.deep.equal([]);
    });

    it('waits for a resource being finalized without deleting it again, and deletes its Secret', () => {
      const item = desired('held', { server_proxy_pat: 'p' });
      const secret = credentialsSecret(item, 'ns-credentials')!;
      const plan = planResync({ desired: [], removals: [removal('held')] }, { resources: [applied(customResource(item, 'ns'), OLD, { deletionTimestamp: FRESH })], secrets: [applied(secret)] }, NAMESPACES, NOW, GRACE);
      expect(plan.deleteResources).to.deep.equal([]);
      expect(plan.deleteSecrets).to.deep.equal([secret.metadata.name]);
      expect(plan.removing).to.have.length(1);
    });

    it('counts a row removed once neither its resource nor its Secret is there', () => {
      const plan = planResync({ desired: [], removals: [removal('gone')] }, { resources: [], secrets: [] }, NAMESPACES, NOW, GRACE);
      expect(plan).to.deep.include({ removed: [removal('gone')], removing: [], deleteResources: [], deleteSecrets: [] });
    });

    it('leaves a resource a live row of the same key wants (a storage key used again) and counts the old row removed', () => {
      const item = desired('again');
      const plan = planResync({ desired: [item], removals: [removal('again')] }, { resources: [applied(customResource(item, 'ns'))], secrets: [] }, NAMESPACES, NOW, GRACE);
      expect(plan).to.deep.include({ inSync: [item], removed: [removal('again')], removing: [], deleteResources: [] });
    });
  });
});
