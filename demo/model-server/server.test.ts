import { expect } from 'chai';
import { createDemoModelServer, type DemoModelServer } from './server.js';

interface Reply {
  status: number;
  body: any;
}

describe('demo model server', () => {
  let demo: DemoModelServer;
  let base: string;
  const call = async (method: string, path: string, body?: unknown, token = 'secret'): Promise<Reply> => {
    const response = await fetch(base + path, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    return { status: response.status, body: await response.json() };
  };
  const flowers = (rows: number[][]) => ({ inputs: [{ name: 'input-0', shape: [rows.length, 4], datatype: 'FP64', data: rows.flat() }] });

  before(async () => {
    demo = createDemoModelServer({ token: 'secret' });
    ({ url: base } = await demo.listen(0, '127.0.0.1'));
  });
  after(() => demo.close());
  beforeEach(() => demo.resetStats());

  it('answers the health, server metadata and repository index endpoints', async () => {
    expect(await call('GET', '/v2/health/live', undefined, 'none')).to.deep.equal({ status: 200, body: { live: true, ready: true } });
    expect((await call('GET', '/v2/health/ready', undefined, 'none')).status).to.equal(200);
    expect((await call('GET', '/v2')).body).to.include({ name: 'didyma-demo-model-server' });
    expect((await call('POST', '/v2/repository/index', {})).body).to.deep.equal([
      { name: 'iris-classifier', version: '1', state: 'READY', reason: '' },
      { name: 'iris-explainer', version: '1', state: 'READY', reason: '' },
      { name: 'always-fails', version: '1', state: 'READY', reason: '' },
      { name: 'csv-summary', version: '1', state: 'READY', reason: '' },
    ]);
  });

  it('describes each model with and without its version, and 404s an unknown one', async () => {
    const withVersion = await call('GET', '/v2/models/iris-classifier/versions/1');
    expect(withVersion.body).to.deep.include({ name: 'iris-classifier', versions: ['1'] });
    expect((await call('GET', '/v2/models/iris-classifier')).body).to.deep.equal(withVersion.body);
    expect(await call('GET', '/v2/models/iris-classifier/versions/1/ready')).to.deep.equal({ status: 200, body: { name: 'iris-classifier', ready: true } });
    expect(await call('GET', '/v2/models/iris-classifier/versions/9')).to.deep.equal({ status: 404, body: { error: 'model iris-classifier version 9 is not served here' } });
  });

  it('requires the token on every /v2 endpoint but health', async () => {
    expect(await call('GET', '/v2/models/iris-classifier', undefined, 'wrong')).to.deep.equal({ status: 401, body: { error: 'missing or invalid bearer token' } });
    expect((await call('POST', '/v2/models/iris-classifier/versions/1/infer', flowers([[5, 3, 1, 0]]), 'wrong')).status).to.equal(401);
  });

  it('classifies flowers given as named feature tensors or as one [n, 4] tensor', async () => {
    const named = {
      id: 'req-1',
      inputs: ['sepal_length', 'sepal_width', 'petal_length', 'petal_width'].map((name, j) => ({ name, shape: [2], datatype: 'FP64', data: [[5.1, 3.5, 1.4, 0.2][j], [6.0, 2.2, 4.0, 1.0][j]] })),
    };
    for (const request of [named, flowers([[5.1, 3.5, 1.4, 0.2], [6.0, 2.2, 4.0, 1.0]])]) {
      const reply = await call('POST', '/v2/models/iris-classifier/versions/1/infer', request);
      expect(reply.status).to.equal(200);
      expect(reply.body.outputs[0]).to.deep.equal({ name: 'predicted_class', datatype: 'BYTES', shape: [2], data: ['setosa', 'versicolor'] });
      expect(reply.body.outputs[1]).to.include({ name: 'probabilities', datatype: 'FP64' });
      expect(reply.body.outputs[1].shape).to.deep.equal([2, 3]);
    }
    expect((await call('POST', '/v2/models/iris-classifier/versions/1/infer', named)).body).to.include({ id: 'req-1', model_name: 'iris-classifier', model_version: '1' });
  });

  it('explains the invocation given in parameters.context, or else its own inputs', async () => {
    const request = JSON.stringify({ sepal_length: 5.9, sepal_width: 3.0, petal_length: 5.1, petal_width: 1.8 });
    const response = JSON.stringify({ outputs: [{ name: 'predicted_class', datatype: 'BYTES', shape: [1], data: ['versicolor'] }] });
    const explained = await call('POST', '/v2/models/iris-explainer/versions/1/infer', { inputs: [], parameters: { context: JSON.stringify([{ request, response }]) } });
    expect(explained.status).to.equal(200);
    // The class the explained invocation answered, even where the explainer itself would say otherwise.
    expect(explained.body.outputs[0].data).to.deep.equal(['versicolor']);
    expect(explained.body.parameters).to.include({ explained: 'context' });
    const own = await call('POST', '/v2/models/iris-explainer/versions/1/infer', flowers([[5.1, 3.5, 1.4, 0.2]]));
    expect(own.body.outputs[0].data).to.deep.equal(['setosa']);
    expect(own.body.parameters).to.include({ explained: 'inputs' });
  });

  it('answers 400 with the reason for input it cannot use', async () => {
    const cases: Array<[unknown, RegExp]> = [
      [{ inputs: [] }, /no inputs/],
      [{ inputs: [{ name: 'x', shape: [1, 3], datatype: 'FP64', data: [1, 2, 3] }] }, /must have shape \[n, 4\]/],
      [{ inputs: [{ name: 'x', shape: [1, 4], datatype: 'BYTES', data: ['a', 'b', 'c', 'd'] }] }, /must be numeric/],
      ['{"inputs": ', /not JSON/],
    ];
    for (const [body, message] of cases) {
      const reply = await call('POST', '/v2/models/iris-classifier/versions/1/infer', body);
      expect(reply.status).to.equal(400);
      expect(reply.body.error).to.match(message);
    }
    const explainer = await call('POST', '/v2/models/iris-explainer/versions/1/infer', { inputs: [], parameters: { context: '[{"request": 1}]' } });
    expect(explainer.body.error).to.match(/parameters.context must be a list/);
  });

  it('fails on purpose with always-fails', async () => {
    expect(await call('POST', '/v2/models/always-fails/versions/1/infer', { inputs: [] })).to.deep.equal({
      status: 500,
      body: { error: 'always-fails fails on purpose: use it to test how errors are handled' },
    });
  });

  it('counts inference calls per model, readable and resettable over HTTP', async () => {
    await call('POST', '/v2/models/iris-classifier/versions/1/infer', flowers([[5, 3, 1, 0]]));
    await call('POST', '/v2/models/iris-classifier/versions/1/infer', flowers([[5, 3, 1, 0]]));
    await call('POST', '/v2/models/always-fails/versions/1/infer', { inputs: [] });
    expect((await call('GET', '/demo/stats', undefined, 'none')).body).to.deep.equal({ 'iris-classifier:1': 2, 'always-fails:1': 1 });
    expect((await call('DELETE', '/demo/stats', undefined, 'none')).body).to.deep.equal({});
    expect(demo.stats()).to.deep.equal({});
  });
});
