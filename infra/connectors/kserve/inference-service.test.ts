import { expect } from 'chai';
import { answersToVersion, describe as describeService, explainerUrlOf, predictorUrlOf, protocolOf, readinessOf, readyRevisionOf, revisionRecordedIn, targetOf, type InferenceService } from './inference-service.js';
import { toV1Request } from './v1.js';

const condition = (type: string, status: string, reason?: string, message?: string) => ({ type, status, reason, message });

function service(status: InferenceService['status'], extra: Partial<InferenceService> = {}): InferenceService {
  return { apiVersion: 'serving.kserve.io/v1beta1', kind: 'InferenceService', metadata: { name: 'iris', namespace: 'models' }, status, ...extra };
}

describe('KServe InferenceService status', () => {
  it('is ready only when Ready and PredictorReady are both True', () => {
    expect(readinessOf(service({ conditions: [condition('Ready', 'True'), condition('PredictorReady', 'True')] }))).to.deep.equal({ ready: true });
    expect(readinessOf(service({ conditions: [condition('Ready', 'True')] }))).to.deep.equal({ ready: false, reason: 'PredictorReady is Unknown (not reported yet)' });
    expect(readinessOf(service({ conditions: [condition('Ready', 'False', 'RevisionMissing', 'Configuration "iris-predictor" does not have any ready Revision.'), condition('PredictorReady', 'True')] }))).to.deep.equal({
      ready: false,
      reason: 'Ready is False (RevisionMissing: Configuration "iris-predictor" does not have any ready Revision.)',
    });
    expect(readinessOf(service(undefined)).ready).to.equal(false);
  });

  it('names the latest ready revision of a ready service only, and reads the one a registration recorded', () => {
    const components = { predictor: { latestReadyRevision: 'iris-predictor-00002', latestCreatedRevision: 'iris-predictor-00003' } };
    const ready = [condition('Ready', 'True'), condition('PredictorReady', 'True')];
    expect(readyRevisionOf(service({ conditions: ready, components }))).to.equal('iris-predictor-00002');
    expect(readyRevisionOf(service({ conditions: [condition('Ready', 'False'), condition('PredictorReady', 'True')], components }))).to.equal(undefined);
    expect(readyRevisionOf(service({ conditions: ready }))).to.equal(undefined);
    expect(revisionRecordedIn(describeService(service({ conditions: ready, components })))).to.equal('iris-predictor-00002');
    expect(revisionRecordedIn({ name: 'iris' })).to.equal(undefined);
    expect(revisionRecordedIn(undefined)).to.equal(undefined);
  });

  it("takes the predictor's in-cluster address first, then its URL, then the service's", () => {
    const predictor = { url: 'http://iris-predictor.models.example.com', address: { url: 'http://iris-predictor.models.svc.cluster.local/' } };
    expect(predictorUrlOf(service({ url: 'http://iris.models.example.com', components: { predictor } }))).to.equal('http://iris-predictor.models.svc.cluster.local');
    expect(predictorUrlOf(service({ url: 'http://iris.models.example.com', components: { predictor: { url: predictor.url } } }))).to.equal(predictor.url);
    expect(predictorUrlOf(service({ url: 'http://iris.models.example.com', address: { url: 'http://iris.models.svc.cluster.local' } }))).to.equal('http://iris.models.svc.cluster.local');
    expect(predictorUrlOf(service({ url: 'http://iris.models.example.com' }))).to.equal('http://iris.models.example.com');
    expect(predictorUrlOf(service({}))).to.equal(undefined);
  });

  it('reads <name>.explainer as the explainer of <name>, ready on ExplainerReady, at its own address', () => {
    expect(targetOf('iris')).to.deep.equal({ name: 'iris', component: 'predictor' });
    expect(targetOf('iris.explainer')).to.deep.equal({ name: 'iris', component: 'explainer' });
    const conditions = [condition('Ready', 'True'), condition('PredictorReady', 'True'), condition('ExplainerReady', 'False', 'RevisionFailed')];
    const explained = service({ conditions, components: { predictor: { url: 'http://p' }, explainer: { url: 'http://e/' } } }, { spec: { explainer: {} } });
    expect(readinessOf(explained, 'explainer')).to.deep.equal({ ready: false, reason: 'ExplainerReady is False (RevisionFailed)' });
    expect(readinessOf(explained).ready).to.equal(true);
    expect(explainerUrlOf(explained)).to.equal('http://e');
    expect(explainerUrlOf(service({ components: { predictor: { url: 'http://p' } } }, { spec: { explainer: {} } }))).to.equal(undefined);
    expect(explainerUrlOf(service({ components: { predictor: { url: 'http://p' } } }))).to.equal('http://p');
  });

  it("speaks the deployment's protocol, else the predictor's protocolVersion, else v2", () => {
    const v1 = service({}, { spec: { predictor: { model: { protocolVersion: 'v1' } } } });
    expect(protocolOf(v1)).to.equal('v1');
    expect(protocolOf(v1, 'v2')).to.equal('v2');
    expect(protocolOf(service({}, { spec: { predictor: { protocolVersion: 'v1' } } }))).to.equal('v1');
    expect(protocolOf(service({}, { spec: { predictor: { model: { protocolVersion: 'grpc-v2' } } } }))).to.equal('v2');
    expect(protocolOf(service({}))).to.equal('v2');
  });

  it('answers to the version its annotation pins, or to any version without one', () => {
    const pinned = service({}, { metadata: { name: 'iris', namespace: 'models', annotations: { 'didyma.io/version': '3' } } });
    expect(answersToVersion(pinned, '3')).to.equal(true);
    expect(answersToVersion(pinned, '4')).to.equal(false);
    expect(answersToVersion(service({}), 'anything')).to.equal(true);
  });

  it('describes a service for its registration: name, namespace, readiness, protocol, revision', () => {
    const ready = service({ conditions: [condition('Ready', 'True'), condition('PredictorReady', 'True')], components: { predictor: { latestReadyRevision: 'iris-predictor-00002' } } });
    expect(describeService(ready)).to.deep.equal({ name: 'iris', namespace: 'models', platform: 'kserve', component: 'predictor', ready: true, protocol: 'v2', latest_ready_revision: 'iris-predictor-00002' });
    expect(describeService(service({}))).to.include({ ready: false, not_ready_reason: 'PredictorReady is Unknown (not reported yet)' });
  });
});

describe('KServe v1 request encoding', () => {
  it('wraps rows, one row, one object or text as instances, and keeps a v1 request as is', () => {
    expect(toV1Request('[[5.1, 3.5, 1.4, 0.2], [6, 3, 5, 2]]')).to.deep.equal({ instances: [[5.1, 3.5, 1.4, 0.2], [6, 3, 5, 2]] });
    expect(toV1Request('[5.1, 3.5, 1.4, 0.2]')).to.deep.equal({ instances: [[5.1, 3.5, 1.4, 0.2]] });
    expect(toV1Request('{"a": 1}')).to.deep.equal({ instances: [{ a: 1 }] });
    expect(toV1Request('hello')).to.deep.equal({ instances: ['hello'] });
    expect(toV1Request('{"instances": [[1]]}')).to.deep.equal({ instances: [[1]] });
    // An Open Inference request of one tensor: its rows, as a v1 explainer of a v2 predictor reads them.
    const v2 = { inputs: [{ name: 'input-0', datatype: 'FP64', shape: [2, 4], data: [5.1, 3.5, 1.4, 0.2, 6, 3, 5, 2] }] };
    expect(toV1Request(JSON.stringify(v2))).to.deep.equal({ instances: [[5.1, 3.5, 1.4, 0.2], [6, 3, 5, 2]] });
    expect(toV1Request(JSON.stringify({ inputs: [{ ...v2.inputs[0], shape: [4], data: [1, 2, 3, 4] }] }))).to.deep.equal({ instances: [[1, 2, 3, 4]] });
    const mismatched = { inputs: [{ ...v2.inputs[0], shape: [3, 4] }] };
    expect(toV1Request(JSON.stringify(mismatched))).to.deep.equal(mismatched);
    expect(toV1Request('[1]', [{ request: '[1]', response: '{}' }])).to.deep.equal({ instances: [[1]], context: [{ request: '[1]', response: '{}' }] });
  });
});
