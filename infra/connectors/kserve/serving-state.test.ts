import { expect } from 'chai';
import type { KServeAccess } from './access.js';
import type { InferenceService } from './inference-service.js';
import { kserveServingState } from './serving-state.js';

const ready = (revision: string, explainerReady = 'True'): InferenceService => ({
  apiVersion: 'serving.kserve.io/v1beta1',
  kind: 'InferenceService',
  metadata: { name: 'iris', namespace: 'models' },
  spec: { explainer: {} },
  status: {
    conditions: [
      { type: 'Ready', status: 'True' },
      { type: 'PredictorReady', status: 'True' },
      { type: 'ExplainerReady', status: explainerReady, reason: 'RevisionFailed' },
    ],
    components: { predictor: { latestReadyRevision: revision }, explainer: { latestReadyRevision: 'iris-explainer-00001' } },
  },
});

function access(service: InferenceService | undefined | Error): KServeAccess {
  return {
    grants: new Map([['models', ['team-a']]]),
    cached: async () => {
      if (service instanceof Error) throw service;
      return service;
    },
    list: async () => [],
  };
}

const recorded = { platform: 'kserve', name: 'iris', namespace: 'models', component: 'predictor', ready: true, latest_ready_revision: 'iris-predictor-00001' };

describe("a KServe model's serving state now", () => {
  it('reads the cached service, not what the registration recorded', async () => {
    expect(await kserveServingState(access(ready('iris-predictor-00002')), 'team-a', recorded)).to.deep.equal({ ready: true, latest_ready_revision: 'iris-predictor-00002' });
    expect(await kserveServingState(access(ready('iris-predictor-00002', 'False')), 'team-a', { ...recorded, component: 'explainer' })).to.deep.equal({
      ready: false,
      not_ready_reason: 'ExplainerReady is False (RevisionFailed)',
      latest_ready_revision: 'iris-explainer-00001',
    });
    expect(await kserveServingState(access(undefined), 'team-a', recorded)).to.deep.equal({ ready: false, not_ready_reason: 'InferenceService models/iris does not exist' });
  });

  it("says nothing of another platform's model, a closed namespace, or a watch that cannot start", async () => {
    expect(await kserveServingState(access(ready('r2')), 'team-a', { name: 'iris' })).to.equal(undefined);
    expect(await kserveServingState(access(ready('r2')), 'team-b', recorded)).to.equal(undefined);
    expect(await kserveServingState(access(new Error('forbidden')), 'team-a', recorded)).to.equal(undefined);
  });
});
