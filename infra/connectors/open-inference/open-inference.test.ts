import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { createDemoModelServer, type DemoModelServer } from '../../../demo/model-server/server.js';
import { InputError } from '../../../kernel/errors/errors.js';
import { HttpClient } from '../../net/http-client.js';
import { UrlPolicy } from '../../net/url-policy.js';
import { UpstreamError } from '../errors.js';
import type { InferenceInput } from '../types.js';
import { OpenInferenceRegistryConnector } from './registry-connector.js';
import { OpenInferenceServerProxy } from './server-proxy.js';

const TOKEN = 'demo-token-123';
const policy = new UrlPolicy({ allowLoopback: true });

interface OipOutput {
  name: string;
  shape: number[];
  data: unknown[];
}

const outputs = (response: string): Record<string, OipOutput> =>
  Object.fromEntries((JSON.parse(response) as { outputs: OipOutput[] }).outputs.map((output) => [output.name, output]));

describe('Open Inference connectors against the demo model server', () => {
  let demo: DemoModelServer;
  let url: string;
  const client = new HttpClient({ policy, retry: { baseDelayMs: 1, maxDelayMs: 5 } });
  const deps = { http: client, deploymentKey: 'demo-deployment' };

  before(async () => {
    demo = createDemoModelServer({ token: TOKEN });
    ({ url } = await demo.listen(0, '127.0.0.1'));
  });
  after(async () => {
    client.close();
    await demo.close();
  });
  beforeEach(() => demo.resetStats());

  describe('OpenInferenceRegistryConnector', () => {
    const registry = () => new OpenInferenceRegistryConnector({ model_registry_url: url, tracking_server_pat: TOKEN }, deps);

    it('returns the model metadata of a version the server knows', async () => {
      const metadata = await registry().lookup('iris-classifier', '1');
      expect(metadata).to.include({ name: 'iris-classifier', platform: 'didyma-demo-model-server' });
      expect(metadata?.versions).to.deep.equal(['1']);
      expect((metadata?.inputs as Array<{ name: string }>).map((i) => i.name)).to.deep.equal(['sepal_length', 'sepal_width', 'petal_length', 'petal_width']);
    });

    it('returns null for an unknown model or version', async () => {
      expect(await registry().lookup('no-such-model', '1')).to.equal(null);
      expect(await registry().lookup('iris-classifier', '2')).to.equal(null);
    });

    it('falls back to the tracking server URL and to the proxy token', async () => {
      const connector = new OpenInferenceRegistryConnector({ tracking_server_url: url, server_proxy_pat: TOKEN }, deps);
      expect(await connector.lookup('iris-explainer', '1')).to.include({ name: 'iris-explainer' });
    });

    it('reports refused credentials as an UpstreamError naming the deployment', async () => {
      const connector = new OpenInferenceRegistryConnector({ model_registry_url: url }, deps);
      const error = await connector.lookup('iris-classifier', '1').catch((e: unknown) => e);
      expect(error).to.be.instanceOf(UpstreamError);
      expect((error as UpstreamError).upstreamStatus).to.equal(401);
      expect((error as Error).message).to.match(/^Deployment "demo-deployment": the model registry failed: GET .* answered HTTP 401/);
    });

    it('reports an unreachable registry as an UpstreamError naming the deployment', async () => {
      const connector = new OpenInferenceRegistryConnector({ model_registry_url: 'http://127.0.0.1:1' }, deps);
      const error = await connector.lookup('iris-classifier', '1').catch((e: unknown) => e);
      expect(error).to.be.instanceOf(UpstreamError);
      expect((error as UpstreamError).transient).to.equal(true);
      expect((error as Error).message).to.equal('Deployment "demo-deployment": the model registry could not be reached.');
      expect((error as UpstreamError).diagnosis).to.match(/connection refused$/);
    });

    it('answers health when the server is live', async () => {
      await registry().health();
      const down = new OpenInferenceRegistryConnector({ model_registry_url: 'http://127.0.0.1:1' }, deps);
      expect(await down.health().catch((e: unknown) => e)).to.be.instanceOf(UpstreamError);
    });
  });

  describe('OpenInferenceServerProxy', () => {
    const proxy = () => new OpenInferenceServerProxy({ server_proxy_url: url, server_proxy_pat: TOKEN }, deps);
    const input = (body: unknown, extra: Partial<InferenceInput> = {}): InferenceInput => ({
      modelCode: 'iris-classifier',
      version: '1',
      body: typeof body === 'string' ? body : JSON.stringify(body),
      requestType: 'FEATURES',
      ...extra,
    });

    it('classifies a flower sent as an object of features', async () => {
      const { response } = await proxy().infer(input({ sepal_length: 5.1, sepal_width: 3.5, petal_length: 1.4, petal_width: 0.2 }));
      const result = outputs(response);
      expect(result.predicted_class?.data).to.deep.equal(['setosa']);
      expect(result.probabilities?.shape).to.deep.equal([1, 3]);
      expect(JSON.parse(response)).to.include({ model_name: 'iris-classifier', model_version: '1' });
      expect(demo.stats()).to.deep.equal({ 'iris-classifier:1': 1 });
    });

    it('classifies a batch of records, a feature matrix and a native Open Inference request alike', async () => {
      const records = [
        { sepal_length: 5.1, sepal_width: 3.5, petal_length: 1.4, petal_width: 0.2 },
        { sepal_length: 6.7, sepal_width: 3, petal_length: 5.2, petal_width: 2.3 },
      ];
      const matrix = records.map((r) => Object.values(r));
      const native = { inputs: [{ name: 'flowers', shape: [2, 4], datatype: 'FP32', data: matrix.flat() }] };
      for (const body of [records, matrix, native]) {
        const { response } = await proxy().infer(input(body));
        expect(outputs(response).predicted_class?.data).to.deep.equal(['setosa', 'virginica']);
      }
    });

    it('passes the context to an explainer, which explains the prediction it describes', async () => {
      const flower = { sepal_length: 6.7, sepal_width: 3, petal_length: 5.2, petal_width: 2.3 };
      const prediction = await proxy().infer(input(flower));
      const explanation = await proxy().infer(input('', { modelCode: 'iris-explainer', requestType: 'OTHER', context: [{ request: JSON.stringify(flower), response: prediction.response }] }));
      const result = outputs(explanation.response);
      expect(result.explained_class?.data).to.deep.equal(['virginica']);
      expect(result.contributions?.shape).to.deep.equal([1, 4]);
      expect(JSON.parse(explanation.response).parameters).to.include({ explained: 'context' });
    });

    it('reports a failing model once, without retrying it, as an UpstreamError with the server message', async () => {
      const error = await proxy().infer(input({ x: 1 }, { modelCode: 'always-fails' })).catch((e: unknown) => e);
      expect(error).to.be.instanceOf(UpstreamError);
      expect((error as UpstreamError).upstreamStatus).to.equal(500);
      expect((error as UpstreamError).transient).to.equal(false);
      expect((error as Error).message).to.contain('always-fails fails on purpose');
      expect(demo.stats()).to.deep.equal({ 'always-fails:1': 1 });
    });

    it('reports input the model refuses with the model server message', async () => {
      const error = await proxy().infer(input({ petal_length: 1 })).catch((e: unknown) => e);
      expect((error as UpstreamError).upstreamStatus).to.equal(400);
      expect((error as Error).message).to.contain('expected four tensors named sepal_length');
    });

    it('refuses a body no tensor can hold before calling the server', async () => {
      const error = await proxy().infer(input({ a: { b: 1 } })).catch((e: unknown) => e);
      expect(error).to.be.instanceOf(InputError);
      expect(demo.stats()).to.deep.equal({});
    });

    it('answers health when the server is ready, and fails it when the server says it is not', async () => {
      expect(await proxy().health().then(() => 'healthy', (e: unknown) => e)).to.equal('healthy');
      // A server that is up but not ready: the proxy asks its readiness, not merely whether it answers.
      const asked: string[] = [];
      const notReady = http.createServer((req, res) => {
        asked.push(req.url!);
        res.writeHead(req.url === '/v2/health/live' ? 200 : 400, { 'content-type': 'application/json' }).end('{}');
      });
      await new Promise<void>((resolve) => notReady.listen(0, '127.0.0.1', resolve));
      try {
        const proxyOfNotReady = new OpenInferenceServerProxy({ server_proxy_url: `http://127.0.0.1:${(notReady.address() as AddressInfo).port}` }, deps);
        const error = await proxyOfNotReady.health().catch((e: unknown) => e);
        expect(error).to.be.instanceOf(UpstreamError);
        expect((error as UpstreamError).upstreamStatus).to.equal(400);
        expect(asked).to.deep.equal(['/v2/health/ready']);
      } finally {
        await new Promise((resolve) => (notReady.close(resolve), notReady.closeAllConnections()));
      }
    });
  });
});

describe('OpenInferenceRegistryConnector against a server with unloaded models', () => {
  let server: http.Server;
  let url: string;
  const client = new HttpClient({ policy });
  const deps = { http: client, deploymentKey: 'triton' };

  before(async () => {
    // Answers like Triton: 400 for metadata of a model that is not loaded, which the index still lists.
    server = http.createServer((req, res) => {
      res.setHeader('content-type', 'application/json');
      if (req.method === 'POST' && req.url === '/v2/repository/index') {
        res.end(JSON.stringify([{ name: 'resnet', version: '3', state: 'UNAVAILABLE', reason: 'unloaded' }]));
      } else {
        res.statusCode = 400;
        res.end(JSON.stringify({ error: `Request for unknown model` }));
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    client.close();
    await new Promise((resolve) => (server.close(resolve), server.closeAllConnections()));
  });

  it('does not know a version whose metadata it cannot answer, whatever the repository index lists', async () => {
    const connector = new OpenInferenceRegistryConnector({ model_registry_url: url }, deps);
    expect(await connector.lookup('resnet', '3')).to.equal(null);
    expect(await connector.lookup('resnet', '4')).to.equal(null);
  });
});
