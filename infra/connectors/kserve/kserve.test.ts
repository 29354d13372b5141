import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { InputError } from '../../../kernel/errors/errors.js';
import { HttpClient } from '../../net/http-client.js';
import { UrlPolicy } from '../../net/url-policy.js';
import { UpstreamError } from '../errors.js';
import { ConnectorCatalog } from '../registry.js';
import type { KServeAccess, NamespaceGrants } from './access.js';
import type { InferenceService } from './inference-service.js';

const REGISTRY = 'didyma.registry.KServeRegistryConnector';
const PROXY = 'didyma.proxy.KServeServerProxy';

/** The cluster as a map, for what the connectors do with what they read (the real access is tested against the API server). */
class MapAccess implements KServeAccess {
  readonly services = new Map<string, InferenceService>();
  readonly selectors: Array<string | undefined> = [];

  constructor(readonly grants: NamespaceGrants) {}

  put(namespace: string, name: string, url: string | undefined, ready = true, extra: Partial<InferenceService> = {}): void {
    const status = ready ? 'True' : 'False';
    const conditions = [
      { type: 'Ready', status },
      { type: 'PredictorReady', status, reason: ready ? undefined : 'MinimumReplicasUnavailable' },
    ];
    this.services.set(`${namespace}/${name}`, { apiVersion: 'serving.kserve.io/v1beta1', kind: 'InferenceService', metadata: { name, namespace }, status: { conditions, components: { predictor: { address: url ? { url } : undefined } } }, ...extra });
  }

  async cached(namespace: string, name: string) {
    return this.services.get(`${namespace}/${name}`);
  }

  async list(namespace: string, labelSelector?: string) {
    this.selectors.push(labelSelector);
    return [...this.services.values()].filter((s) => s.metadata.namespace === namespace);
  }
}

const IRIS_METADATA = { name: 'iris', platform: 'sklearn', inputs: [{ name: 'input-0', datatype: 'FP32', shape: [-1, 4] }], outputs: [{ name: 'predict', datatype: 'BYTES', shape: [-1] }] };

/** A model server answering v2 `/v2/models/{name}/infer` and v1 `/v1/models/{name}:predict`, telling which server answered. */
async function modelServer(id: string) {
  const paths: string[] = [];
  const server = http.createServer((req, res) => {
    paths.push(req.url!);
    res.setHeader('content-type', 'application/json');
    if (req.url!.endsWith(':predict')) return res.end(JSON.stringify({ predictions: [id] }));
    if (req.url!.endsWith(':explain')) {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      return req.on('end', () => res.end(JSON.stringify({ explanations: [id], asked: JSON.parse(body) })));
    }
    if (req.method === 'GET' && req.url === '/v2/models/iris') return res.end(JSON.stringify(IRIS_METADATA));
    if (req.method === 'GET') return (res.statusCode = 404), res.end(JSON.stringify({ error: 'Model not found' }));
    res.end(JSON.stringify({ model_name: 'iris', outputs: [{ name: 'server', shape: [1], datatype: 'BYTES', data: [id] }] }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, paths, close: () => new Promise((resolve) => (server.close(resolve), server.closeAllConnections())) };
}

function refusal(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    expect(error).to.be.instanceOf(InputError);
    return (error as Error).message;
  }
  throw new Error('no error was thrown');
}

describe('KServe connectors', () => {
  const policy = new UrlPolicy({ allowLoopback: true });
  const client = new HttpClient({ policy, retry: { baseDelayMs: 1, maxDelayMs: 5 } });
  const grants: NamespaceGrants = new Map<string, readonly string[] | '*'>([
    ['models', ['team-a']],
    ['shared', '*'],
  ]);
  let access: MapAccess;
  let catalog: ConnectorCatalog;
  let first: Awaited<ReturnType<typeof modelServer>>;
  let second: Awaited<ReturnType<typeof modelServer>>;
  const deps = (workspace = 'team-a') => ({ http: client, deploymentKey: 'kserve', workspace });

  before(async () => {
    [first, second] = await Promise.all([modelServer('first'), modelServer('second')]);
  });
  beforeEach(() => {
    access = new MapAccess(grants);
    catalog = new ConnectorCatalog({ policy, kserve: access });
  });
  after(async () => {
    client.close();
    await Promise.all([first.close(), second.close()]);
  });

  describe('init', () => {
    it('takes a list of namespaces, or names separated by commas, and stores them comma-separated', () => {
      expect(catalog.validate('registry', REGISTRY, { namespaces: ['models', 'shared'], label_selector: 'team=a' }, 'team-a').init).to.deep.equal({ namespaces: 'models,shared', label_selector: 'team=a' });
      expect(catalog.validate('proxy', PROXY, { namespaces: 'models, shared', protocol: 'v1' }, 'team-a').init).to.deep.equal({ namespaces: 'models,shared', protocol: 'v1' });
    });

    it('refuses a namespace the platform did not open to the workspace, naming it', () => {
      expect(refusal(() => catalog.validate('registry', REGISTRY, { namespaces: ['shared', 'models'] }, 'team-b'))).to.equal(
        "registry_connector_init.namespaces names models, which the platform's operator has not opened to this workspace (DIDYMA_KSERVE_NAMESPACES)",
      );
      expect(refusal(() => catalog.validate('proxy', PROXY, { namespaces: 'kube-system' }, 'team-a'))).to.match(/^server_proxy_init.namespaces names kube-system, which/);
    });

    it('refuses missing or malformed parameters', () => {
      expect(refusal(() => catalog.validate('registry', REGISTRY, {}, 'team-a'))).to.match(/^registry_connector_init.namespaces is required/);
      expect(refusal(() => catalog.validate('registry', REGISTRY, { namespaces: ['Models'] }, 'team-a'))).to.match(/namespaces must be a non-empty list of namespace names/);
      expect(refusal(() => catalog.validate('proxy', PROXY, { namespaces: 'models', protocol: 'v3' }, 'team-a'))).to.equal('server_proxy_init.protocol must be one of v1, v2');
      expect(refusal(() => catalog.validate('proxy', PROXY, { namespaces: 'models', label_selector: 'a=b' }, 'team-a'))).to.match(/label_selector is not a parameter of didyma.proxy.KServeServerProxy/);
    });

    it('takes versioning given or revision on the registry only', () => {
      expect(catalog.validate('registry', REGISTRY, { namespaces: ['models'], versioning: 'revision' }, 'team-a').init).to.deep.equal({ namespaces: 'models', versioning: 'revision' });
      expect(refusal(() => catalog.validate('registry', REGISTRY, { namespaces: ['models'], versioning: 'latest' }, 'team-a'))).to.equal('registry_connector_init.versioning must be one of given, revision');
      expect(refusal(() => catalog.validate('proxy', PROXY, { namespaces: 'models', versioning: 'revision' }, 'team-a'))).to.match(/versioning is not a parameter of didyma.proxy.KServeServerProxy/);
    });

    it('refuses every init outside Kubernetes mode, saying so', () => {
      const embedded = new ConnectorCatalog({ policy });
      expect(refusal(() => embedded.validate('registry', REGISTRY, { namespaces: ['models'] }, 'team-a'))).to.match(/^registry_connector_init cannot be used: .* this platform does not run in Kubernetes mode/);
      expect(() => embedded.createServerProxy(PROXY, { namespaces: 'models' }, deps())).to.throw('Connector class didyma.proxy.KServeServerProxy needs Kubernetes mode (DIDYMA_KUBE_MODE) on this server');
    });
  });

  describe('KServeRegistryConnector', () => {
    const registry = (init: Record<string, string>, workspace = 'team-a') => catalog.createRegistryConnector(REGISTRY, init, deps(workspace));

    it('knows a service of its namespaces by name, ready or not, with what KServe says of it', async () => {
      access.put('shared', 'iris', first.url, false);
      const metadata = await registry({ namespaces: 'models,shared', label_selector: 'serving=didyma' }).lookup('iris', '1');
      expect(metadata).to.include({ name: 'iris', namespace: 'shared', platform: 'kserve', ready: false, protocol: 'v2' });
      expect(access.selectors).to.include('serving=didyma');
      expect(await registry({ namespaces: 'models' }).lookup('iris', '1')).to.equal(null);
      expect(await registry({ namespaces: 'shared' }).lookup('other', '1')).to.equal(null);
    });

    it("derives the schemas of a v2 service from its model's metadata, read from its predictor", async () => {
      access.put('models', 'iris', first.url);
      const { input, output } = await registry({ namespaces: 'models' }).schemasOf!('iris', '1');
      expect(first.paths.at(-1)).to.equal('/v2/models/iris');
      expect(input!.description).to.equal("From the model's Open Inference metadata: input-0 (FP32, shape any × 4).");
      expect(input!.fields).to.deep.equal([{ name: 'input-0', type: 'FP32', required: true }]);
      expect(output!.description).to.contain('predict (BYTES, shape any)');
    });

    it('derives none for a v1 service, one not ready, or a model its server does not describe', async () => {
      const seen = first.paths.length;
      access.put('models', 'iris', first.url, true, { spec: { predictor: { protocolVersion: 'v1' } } });
      expect(await registry({ namespaces: 'models' }).schemasOf!('iris', '1')).to.deep.equal({});
      access.put('models', 'iris', first.url, false);
      expect(await registry({ namespaces: 'models' }).schemasOf!('iris', '1')).to.deep.equal({});
      expect(first.paths.length).to.equal(seen);
      access.put('models', 'setosa', first.url);
      expect(await registry({ namespaces: 'models' }).schemasOf!('setosa', '1')).to.deep.equal({});
      expect(first.paths.at(-1)).to.equal('/v2/models/setosa');
    });

    it('reads the metadata through the outbound policy', async () => {
      access.put('models', 'iris', 'http://169.254.169.254');
      const strict = new HttpClient({ policy: new UrlPolicy() });
      try {
        const registry = catalog.createRegistryConnector(REGISTRY, { namespaces: 'models' }, { http: strict, deploymentKey: 'kserve', workspace: 'team-a' });
        const error = (await registry.schemasOf!('iris', '1').catch((e: unknown) => e)) as UpstreamError;
        expect(error).to.be.instanceOf(UpstreamError);
        expect(error.publicMessage).to.equal('Deployment "kserve": the model server could not be reached.');
      } finally {
        strict.close();
      }
    });

    it('knows a service\'s explainer as <name>.explainer when it has an explainer component or speaks v1', async () => {
      access.put('models', 'iris', first.url);
      expect(await registry({ namespaces: 'models' }).lookup('iris.explainer', '1')).to.equal(null);
      access.put('models', 'iris', first.url, false, { spec: { explainer: { containers: [] } } });
      expect(await registry({ namespaces: 'models' }).lookup('iris.explainer', '1')).to.include({ name: 'iris', component: 'explainer', protocol: 'v1', ready: false });
      expect(await registry({ namespaces: 'models' }).schemasOf!('iris.explainer', '1')).to.deep.equal({});
      access.put('models', 'iris', first.url, true, { spec: { predictor: { protocolVersion: 'v1' } } });
      expect(await registry({ namespaces: 'models' }).lookup('iris.explainer', '1')).to.include({ component: 'explainer', ready: true });
    });

    it('offers every service of its namespaces, and the explainer of each that explains, with the host its calls go to', async () => {
      access.put('models', 'iris', 'http://iris-predictor.models.svc.cluster.local:8080/', false);
      access.put('shared', 'setosa', undefined, true, { metadata: { name: 'setosa', namespace: 'shared', annotations: { 'didyma.io/version': '3' } }, spec: { predictor: { protocolVersion: 'v1' } } });
      const offers = await registry({ namespaces: 'models,shared' }).offered!();
      expect(offers.map((o) => [o.model_code, o.version])).to.deep.equal([
        ['iris', null],
        ['setosa', '3'],
        ['setosa.explainer', '3'],
      ]);
      expect(offers[0]!.registry).to.deep.include({ name: 'iris', namespace: 'models', component: 'predictor', ready: false, protocol: 'v2', host: 'iris-predictor.models.svc.cluster.local:8080' });
      expect(offers[2]!.registry).to.deep.include({ name: 'setosa', component: 'explainer', ready: true, protocol: 'v1' });
      expect(offers[2]!.registry).to.not.have.property('host');
      const lost = await registry({ namespaces: 'models' }, 'team-b').offered!().catch((e: unknown) => e);
      expect(lost).to.be.instanceOf(UpstreamError);
    });

    it('reads no namespace its workspace has lost since the deployment was made', async () => {
      const error = await registry({ namespaces: 'models' }, 'team-b').lookup('iris', '1').catch((e: unknown) => e);
      expect(error).to.be.instanceOf(UpstreamError);
      expect((error as Error).message).to.contain('namespace models is not opened to its workspace');
    });
  });

  describe('KServeServerProxy', () => {
    const proxy = (init: Record<string, string> = { namespaces: 'models' }) => catalog.createServerProxy(PROXY, init, deps());
    const input = { modelCode: 'iris', version: '1', body: '[[5.1, 3.5, 1.4, 0.2]]', requestType: 'FEATURES' as const };
    const answeredBy = (response: string) => JSON.parse(response).outputs[0].data[0];

    it("calls the predictor the service's status names at each call: a new address is followed with no change", async () => {
      access.put('models', 'iris', first.url);
      const p = proxy();
      expect(answeredBy((await p.infer(input)).response)).to.equal('first');
      expect(first.paths.at(-1)).to.equal('/v2/models/iris/infer');
      access.put('models', 'iris', second.url);
      expect(answeredBy((await p.infer(input)).response)).to.equal('second');
    });

    it('speaks v1 when the init or the service says so', async () => {
      access.put('models', 'iris', first.url, true, { spec: { predictor: { model: { protocolVersion: 'v1' } } } });
      expect(JSON.parse((await proxy().infer(input)).response)).to.deep.equal({ predictions: ['first'] });
      expect(first.paths.at(-1)).to.equal('/v1/models/iris:predict');
      access.put('models', 'iris', first.url);
      await proxy({ namespaces: 'models', protocol: 'v1' }).infer(input);
      expect(first.paths.at(-1)).to.equal('/v1/models/iris:predict');
    });

    it("asks <name>.explainer of the service's explainer component, the explained exchange in context", async () => {
      const conditions = [
        { type: 'PredictorReady', status: 'True' },
        { type: 'ExplainerReady', status: 'True' },
        { type: 'Ready', status: 'True' },
      ];
      access.put('models', 'iris', first.url, true, { spec: { explainer: {} }, status: { conditions, components: { predictor: { url: first.url }, explainer: { address: { url: `${second.url}/` } } } } });
      const context = [{ request: input.body, response: '{"outputs":[]}' }];
      const explained = JSON.parse((await proxy().infer({ ...input, modelCode: 'iris.explainer', context })).response);
      expect(second.paths.at(-1)).to.equal('/v1/models/iris:explain');
      expect(explained).to.deep.equal({ explanations: ['second'], asked: { instances: [[5.1, 3.5, 1.4, 0.2]], context } });
      conditions[1]!.status = 'False';
      const error = (await proxy().infer({ ...input, modelCode: 'iris.explainer' }).catch((e: unknown) => e)) as UpstreamError;
      expect(error).to.include({ transient: true, kind: 'unreachable' });
      expect(error.message).to.equal('Deployment "kserve": InferenceService models/iris is not ready: ExplainerReady is False.');
    });

    it("asks a v1 predictor's own :explain when the service has no explainer, and refuses a v2 one without", async () => {
      access.put('models', 'iris', first.url, true, { spec: { predictor: { protocolVersion: 'v1' } } });
      expect(JSON.parse((await proxy().infer({ ...input, modelCode: 'iris.explainer' })).response).explanations).to.deep.equal(['first']);
      expect(first.paths.at(-1)).to.equal('/v1/models/iris:explain');
      access.put('models', 'iris', first.url);
      const error = (await proxy().infer({ ...input, modelCode: 'iris.explainer' }).catch((e: unknown) => e)) as UpstreamError;
      expect(error.message).to.equal('Deployment "kserve": InferenceService models/iris has no explainer (and its predictor does not speak v1).');
    });

    it('fails fast, as worth retrying, when the service is missing, not ready or not addressed yet', async () => {
      const failure = async () => (await proxy().infer(input).catch((e: unknown) => e)) as UpstreamError;
      let error = await failure();
      expect(error).to.be.instanceOf(UpstreamError);
      expect(error).to.include({ transient: true, kind: 'unreachable' });
      expect(error.message).to.equal('Deployment "kserve": no InferenceService named iris in its namespaces.');
      access.put('models', 'iris', first.url, false);
      error = await failure();
      expect(error).to.include({ transient: true, kind: 'unreachable' });
      expect(error.message).to.equal('Deployment "kserve": InferenceService models/iris is not ready: PredictorReady is False (MinimumReplicasUnavailable).');
      access.put('models', 'iris', undefined);
      expect((await failure()).message).to.equal('Deployment "kserve": InferenceService models/iris has no predictor address in its status yet.');
    });

    it('refuses an address the outbound policy refuses, without saying whether it answers', async () => {
      access.put('models', 'iris', 'http://169.254.169.254');
      const strict = new HttpClient({ policy: new UrlPolicy() });
      try {
        const error = (await catalog.createServerProxy(PROXY, { namespaces: 'models' }, { http: strict, deploymentKey: 'kserve', workspace: 'team-a' }).infer(input).catch((e: unknown) => e)) as UpstreamError;
        expect(error).to.be.instanceOf(UpstreamError);
        expect(error.publicMessage).to.equal('Deployment "kserve": the model server could not be reached.');
      } finally {
        strict.close();
      }
    });
  });
});
