import { expect } from 'chai';
import type { KubeObject } from '../infra/kube/resources.js';
import { GenerationFilter } from './generation-filter.js';

const resource = (generation: number, extra: Partial<KubeObject['metadata']> = {}, status: unknown = {}): KubeObject => ({
  apiVersion: 'didyma.io/v1alpha1',
  kind: 'ModelDeployment',
  metadata: { name: 'a', uid: 'u1', generation, resourceVersion: String(Math.random()), ...extra },
  status,
});

describe('generation filter', () => {
  it('passes a new object, a spec change, a deletion request and a deletion', () => {
    const filter = new GenerationFilter();
    expect(filter.changed('a', resource(1))).to.equal(true);
    expect(filter.changed('a', resource(2))).to.equal(true);
    expect(filter.changed('a', resource(3, { deletionTimestamp: new Date(0) }))).to.equal(true);
    expect(filter.changed('a', undefined)).to.equal(true);
    expect(filter.changed('a', resource(3, { deletionTimestamp: new Date(0) }))).to.equal(true);
  });

  it('skips status, finalizer and label writes, which keep the generation', () => {
    const filter = new GenerationFilter();
    filter.changed('a', resource(1));
    expect(filter.changed('a', resource(1, { finalizers: ['didyma.io/proxy-configuration'] }))).to.equal(false);
    expect(filter.changed('a', resource(1, {}, { observedGeneration: 1, conditions: [] }))).to.equal(false);
    expect(filter.changed('a', resource(1, { labels: { team: 'x' } }))).to.equal(false);
  });

  it('passes an object made again under the same name, whatever its generation', () => {
    const filter = new GenerationFilter();
    filter.changed('a', resource(1));
    expect(filter.changed('a', resource(1, { uid: 'u2' }))).to.equal(true);
  });

  it('keeps names apart', () => {
    const filter = new GenerationFilter();
    filter.changed('a', resource(1));
    expect(filter.changed('b', { ...resource(1), metadata: { ...resource(1).metadata, name: 'b' } })).to.equal(true);
  });
});
