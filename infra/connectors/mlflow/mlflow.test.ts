import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { HttpClient } from '../../net/http-client.js';
import { UrlPolicy } from '../../net/url-policy.js';
import { UpstreamError } from '../errors.js';
import { MlflowRegistryConnector } from './registry-connector.js';
import { MlflowServerProxy } from './server-proxy.js';

const TOKEN = 'dapi-test-token';

const MODEL_VERSION = { name: 'churn', version: '2', current_stage: 'Production', status: 'READY', run_id: 'abc', source: 'models:/m-1' };
const REGISTERED_MODEL = { name: 'churn', description: 'Predicts churn', tags: [{ key: 'team', value: 'growth' }] };

// The MLmodel file of churn 2 as MLflow writes it: the signature's sides are JSON text inside YAML.
const MLMODEL = `artifact_path: mlflow-artifacts:/1/models/m-1/artifacts
flavors:
  python_function:
    loader_module: mlflow.sklearn
signature:
  inputs: '[{"type": "long", "name": "tenure", "required": true}, {"type": "string",
    "name": "plan", "required": false}]'
  outputs: '[{"type": "tensor", "tensor-spec": {"dtype": "float64", "shape": [-1]}}]'
  params: null
`;

interface Seen {
  method: string;
  path: string;
  query: URLSearchParams;
  authorization?: string;
  body: string;
}

/**
 * Speaks the MLflow endpoints the connectors use, as the MLflow server does:
 * RESOURCE_DOES_NOT_EXIST with 404, or with 400 as older servers did for a name
 * starting with "old-".
 */
function mlflowLike(seen: Seen[]) {
  return (req: IncomingMessage, res: ServerResponse, body: string) => {
    const url = new URL(req.url ?? '/', 'http://mlflow');
    seen.push({ method: req.method ?? '', path: url.pathname, query: url.searchParams, authorization: req.headers.authorization, body });
    const send = (status: number, value: unknown) => (res.writeHead(status, { 'content-type': 'application/json' }), res.end(JSON.stringify(value)));
    const missing = (status: number) => send(status, { error_code: 'RESOURCE_DOES_NOT_EXIST', message: 'Registered Model not found' });
    if (req.headers.authorization !== `Bearer ${TOKEN}`) return send(401, { error_code: 'UNAUTHENTICATED', message: 'bad credentials' });
    const name = url.searchParams.get('name') ?? '';
    switch (url.pathname) {
      case '/api/2.0/mlflow/model-versions/get':
        if (name === 'broken') return send(500, { error_code: 'INTERNAL_ERROR', message: 'database is down' });
        if (name === 'churn' && url.searchParams.get('version') === '2') return send(200, { model_version: MODEL_VERSION });
        return missing(name.startsWith('old-') ? 400 : 404);
      case '/api/2.0/mlflow/registered-models/get':
        return name === 'churn' ? send(200, { registered_model: REGISTERED_MODEL }) : missing(404);
      case '/api/2.0/mlflow/registered-models/search':
        return send(200, { registered_models: [REGISTERED_MODEL] });
      case '/model-versions/get-artifact':
        if (url.searchParams.get('path') !== 'MLmodel') return missing(404);
        if (name === 'churn') return (res.writeHead(200, { 'content-type': 'text/plain' }), res.end(MLMODEL));
        if (name === 'unsigned') return (res.writeHead(200, { 'content-type': 'text/plain' }), res.end('flavors: {}\n'));
        if (name === 'garbled') return (res.writeHead(200, { 'content-type': 'text/plain' }), res.end("signature:\n  inputs: '[{\"type\": \"decimal\", \"name\": \"x\"}]'\n"));
        return missing(404);
      case '/invocations':
        return send(200, { predictions: [0.91] });
      case '/ping':
        res.writeHead(200, { 'content-type': 'application/json' });
        return res.end('\n');
      default:
        return send(404, { error_code: 'ENDPOINT_NOT_FOUND', message: 'no such endpoint' });
    }
  };
}

describe('MLflow connectors against an MLflow-speaking server', () => {
  const seen: Seen[] = [];
  let server: http.Server;
  let url: string;
  const client = new HttpClient({ policy: new UrlPolicy({ allowLoopback: true }), retry: { baseDelayMs: 1, maxDelayMs: 5 } });
  const deps = { http: client, deploymentKey: 'mlflow-prod' };

  before(async () => {
    const handle = mlflowLike(seen);
    server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => handle(req, res, Buffer.concat(chunks).toString()));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    client.close();
    await new Promise((resolve) => (server.close(resolve), server.closeAllConnections()));
  });
  beforeEach(() => seen.splice(0));

  describe('MlflowRegistryConnector', () => {
    const registry = () => new MlflowRegistryConnector({ model_registry_url: url, tracking_server_pat: TOKEN }, deps);

    it('returns the model version record with its registered model', async () => {
      expect(await registry().lookup('churn', '2')).to.deep.equal({ ...MODEL_VERSION, registered_model: REGISTERED_MODEL });
      expect(seen.map((s) => [s.path, s.query.get('name'), s.query.get('version'), s.authorization])).to.deep.equal([
        ['/api/2.0/mlflow/model-versions/get', 'churn', '2', `Bearer ${TOKEN}`],
        ['/api/2.0/mlflow/registered-models/get', 'churn', null, `Bearer ${TOKEN}`],
      ]);
    });

    it('returns null when MLflow answers RESOURCE_DOES_NOT_EXIST, as 404 or as 400', async () => {
      expect(await registry().lookup('churn', '3')).to.equal(null);
      expect(await registry().lookup('old-model', '1')).to.equal(null);
    });

    it('returns null without asking for a version MLflow cannot have', async () => {
      expect(await registry().lookup('churn', 'v2')).to.equal(null);
      expect(seen).to.have.length(0);
    });

    it('uses the tracking server URL when no registry URL is given', async () => {
      const connector = new MlflowRegistryConnector({ tracking_server_url: url, tracking_server_pat: TOKEN }, deps);
      expect(await connector.lookup('churn', '2')).to.include({ name: 'churn' });
    });

    it('reports a failing or refusing registry as an UpstreamError naming the deployment', async () => {
      const failing = await registry().lookup('broken', '1').catch((e: unknown) => e);
      expect(failing).to.be.instanceOf(UpstreamError);
      expect((failing as UpstreamError).upstreamStatus).to.equal(500);
      expect((failing as Error).message).to.match(/^Deployment "mlflow-prod": the model registry failed: .*HTTP 500: .*database is down/);
      const anonymous = new MlflowRegistryConnector({ model_registry_url: url }, deps);
      const refused = await anonymous.lookup('churn', '2').catch((e: unknown) => e);
      expect((refused as UpstreamError).upstreamStatus).to.equal(401);
      expect((refused as Error).message).to.contain('UNAUTHENTICATED');
    });

    it("reads the input and output schemas from the logged model's signature on the tracking server", async () => {
      const connector = new MlflowRegistryConnector({ model_registry_url: 'http://127.0.0.1:1', tracking_server_url: url, tracking_server_pat: TOKEN }, deps);
      const schemas = await connector.schemasOf('churn', '2');
      expect(seen.map((s) => [s.path, s.query.get('path'), s.query.get('name'), s.query.get('version'), s.authorization])).to.deep.equal([
        ['/model-versions/get-artifact', 'MLmodel', 'churn', '2', `Bearer ${TOKEN}`],
      ]);
      expect(schemas.input?.fields).to.deep.equal([
        { name: 'tenure', type: 'long', required: true },
        { name: 'plan', type: 'string', required: false },
      ]);
      expect(schemas.output?.schema).to.deep.equal({ type: 'object', required: ['predictions'], properties: { predictions: { type: 'array', items: { type: 'number' } } } });
    });

    it('reads no schemas for a version without MLmodel or signature, and refuses a signature it cannot map', async () => {
      expect(await registry().schemasOf('unsigned', '1')).to.deep.equal({});
      expect(await registry().schemasOf('unknown', '1')).to.deep.equal({});
      const garbled = await registry().schemasOf('garbled', '1').catch((e: unknown) => e);
      expect(garbled).to.be.instanceOf(UpstreamError);
      expect((garbled as Error).message).to.equal('Deployment "mlflow-prod": the tracking server answered a model signature the platform cannot read: the signature has a column of unknown type "decimal"');
    });

    it('answers health with a one-item search', async () => {
      await registry().health();
      expect(seen[0]?.query.get('max_results')).to.equal('1');
      const down = new MlflowRegistryConnector({ model_registry_url: 'http://127.0.0.1:1' }, deps);
      const error = await down.health().catch((e: unknown) => e);
      expect((error as Error).message).to.match(/^Deployment "mlflow-prod": the model registry could not be reached/);
    });
  });

  describe('MlflowServerProxy', () => {
    const proxy = () => new MlflowServerProxy({ server_proxy_url: url, server_proxy_pat: TOKEN }, deps);

    it('posts records as dataframe_split to /invocations and returns the answer as JSON text', async () => {
      const output = await proxy().infer({ modelCode: 'churn', version: '2', body: '[{"tenure": 3, "plan": "pro"}]', requestType: 'FEATURES' });
      expect(JSON.parse(output.response)).to.deep.equal({ predictions: [0.91] });
      expect(seen[0]?.path).to.equal('/invocations');
      expect(JSON.parse(seen[0]?.body ?? '')).to.deep.equal({ dataframe_split: { columns: ['tenure', 'plan'], data: [[3, 'pro']] } });
    });

    it('sends the session context in params.context', async () => {
      const context = [{ request: '{"tenure":1}', response: '{"predictions":[0.2]}' }];
      await proxy().infer({ modelCode: 'churn', version: '2', body: '{"inputs": [1]}', requestType: 'FEATURES', context });
      expect(JSON.parse(seen[0]?.body ?? '')).to.deep.equal({ inputs: [1], params: { context: JSON.stringify(context) } });
    });

    it('reports refused credentials as an UpstreamError', async () => {
      const anonymous = new MlflowServerProxy({ server_proxy_url: url }, deps);
      const error = await anonymous.infer({ modelCode: 'churn', version: '2', body: '{}', requestType: 'FEATURES' }).catch((e: unknown) => e);
      expect((error as UpstreamError).upstreamStatus).to.equal(401);
    });

    it('answers health from /ping', async () => {
      await proxy().health();
      expect(seen[0]?.path).to.equal('/ping');
    });
  });
});
