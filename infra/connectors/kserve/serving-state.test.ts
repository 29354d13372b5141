import { expect } from 'chai';
import type { InferenceService } from './inference-service.js';
import { componentStates } from './serving-state.js';

const service = (explainerReady: string | undefined, protocolVersion = 'v2'): InferenceService => ({
  apiVersion: 'serving.kserve.io/v1beta1',
  kind: 'InferenceService',
  metadata: { name: 'iris', namespace: 'models' },
  spec: { predictor: { protocolVersion }, ...(explainerReady ? { explainer: {} } : {}) },
  status: {
    conditions: [
      { type: 'Ready', status: 'True' },
      { type: 'PredictorReady', status: 'True' },
      ...(explainerReady ? [{ type: 'ExplainerReady', status: explainerReady, reason: 'RevisionFailed' }] : []),
    ],
    components: { predictor: { latestReadyRevision: 'iris-predictor-00002' }, ...(explainerReady ? { explainer: { latestReadyRevision: 'iris-explainer-00001' } } : {}) },
  },
});

describe("a KServe service's serving state", () => {
  it('gives each component a model code can name its readiness and latest ready revision', () => {
    expect(componentStates(service('False'))).to.deep.equal({
      predictor: { ready: true, latest_ready_revision: 'iris-predictor-00002' },
      explainer: { ready: false, not_ready_reason: 'ExplainerReady is False (RevisionFailed)', latest_ready_revision: 'iris-explainer-00001' },
    });
    expect(componentStates(service(undefined))).to.deep.equal({ predictor: { ready: true, latest_ready_revision: 'iris-predictor-00002' } });
    // A v1 predictor explains by itself: its explainer is the predictor.
    expect(componentStates(service(undefined, 'v1')).explainer).to.deep.equal({ ready: true });
  });
});
