import { expect } from 'chai';
import type { DesiredDeployment } from './desired.js';
import { customResource, credentialsSecret, type KubeObject } from './resources.js';
import { planResync } from './resync-plan.js';

const NOW = Date.parse('2026-01-01T12:00:00Z');
const GRACE = 60_000;
const OLD = new Date(NOW - 10 * 60_000);
const FRESH = new Date(NOW - 5_000);
const NAMESPACES = { namespace: 'ns', credentialsNamespace: 'ns-credentials' };

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
    const plan = planResync([item], { resources: [applied(customResource(item, 'ns'))], secrets: [applied(credentialsSecret(item, 'ns-credentials')!)] }, NAMESPACES, NOW, GRACE);
    expect(plan).to.deep.equal({ apply: [], deleteResources: [], deleteSecrets: [], unchanged: 1 });
  });

  it('applies missing resources, edited specs and changed credentials', () => {
    const missing = desired('missing');
    const edited = desired('edited');
    const rotated = desired('rotated', { server_proxy_pat: 'new' });
    const editedObject = structuredClone(applied(customResource(edited, 'ns')));
    (editedObject.spec as { serverProxy: { init: Record<string, string> } }).serverProxy.init = { server_proxy_url: 'http://elsewhere.example' };
    const plan = planResync(
      [missing, edited, rotated],
      { resources: [editedObject, applied(customResource(rotated, 'ns'))], secrets: [applied(credentialsSecret({ ...rotated, secrets: { server_proxy_pat: 'old' } }, 'ns-credentials')!)] },
      NAMESPACES,
      NOW,
      GRACE,
    );
    expect(plan.apply.map((d) => d.key)).to.deep.equal(['missing', 'edited', 'rotated']);
  });

  it('applies again a resource being deleted that the database still wants', () => {
    const item = desired('back');
    const plan = planResync([item], { resources: [applied(customResource(item, 'ns'), OLD, { deletionTimestamp: FRESH })], secrets: [] }, NAMESPACES, NOW, GRACE);
    expect(plan.apply).to.have.length(1);
  });

  it('deletes resources and Secrets nobody wants, once past the grace period', () => {
    const gone = desired('gone', { server_proxy_pat: 'p' });
    const young = desired('young');
    const orphanSecret = credentialsSecret(desired('orphan', { server_proxy_pat: 'p' }), 'ns-credentials')!;
    const plan = planResync(
      [],
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
      const plan = planResync([], { resources: [applied(customResource(desired('x'), 'ns'), created as Date)], secrets: [] }, NAMESPACES, NOW, GRACE);
      expect(plan.deleteResources, String(created)).to.have.length(deleted);
    }
  });

  it('does not delete a resource already being deleted', () => {
    const plan = planResync([], { resources: [applied(customResource(desired('x'), 'ns'), OLD, { deletionTimestamp: FRESH })], secrets: [] }, NAMESPACES, NOW, GRACE);
    expect(plan.deleteResources).to.deep.equal([]);
  });
});
