import { expect } from 'chai';
import { InputError } from '../../kernel/errors/errors.js';
import { HttpClient } from '../net/http-client.js';
import { UrlPolicy } from '../net/url-policy.js';
import { MlflowRegistryConnector } from './mlflow/registry-connector.js';
import { OpenInferenceServerProxy } from './open-inference/server-proxy.js';
import { BUILT_IN_CONNECTOR_CLASSES, ConnectorCatalog, type ConnectorClass } from './registry.js';

const OIP_REGISTRY = 'didyma.registry.OpenInferenceRegistryConnector';
const MLFLOW_REGISTRY = 'didyma.registry.MlflowRegistryConnector';
const OIP_PROXY = 'didyma.proxy.OpenInferenceServerProxy';
const MLFLOW_PROXY = 'didyma.proxy.MlflowServerProxy';

function inputError(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    expect(error).to.be.instanceOf(InputError);
    return (error as InputError).message;
  }
  throw new Error('no error was thrown');
}

describe('ConnectorCatalog', () => {
  const catalog = new ConnectorCatalog({ policy: new UrlPolicy() });

  it('knows the built-in classes by kind, the KServe ones even outside Kubernetes mode', () => {
    expect(catalog.names('registry')).to.deep.equal([OIP_REGISTRY, MLFLOW_REGISTRY, 'didyma.registry.KServeRegistryConnector']);
    expect(catalog.names('proxy')).to.deep.equal([OIP_PROXY, MLFLOW_PROXY, 'didyma.proxy.KServeServerProxy']);
  });

  it('normalizes a valid init: trailing slashes removed, empty parameters dropped', () => {
    const registry = catalog.validate('registry', MLFLOW_REGISTRY, { model_registry_url: 'https://mlflow.example.com/', tracking_server_url: 'https://mlflow.example.com/', tracking_server_pat: 'dapi123' });
    expect(registry).to.deep.equal({ className: MLFLOW_REGISTRY, init: { model_registry_url: 'https://mlflow.example.com', tracking_server_url: 'https://mlflow.example.com', tracking_server_pat: 'dapi123' } });
    const proxy = catalog.validate('proxy', OIP_PROXY, { server_proxy_url: 'https://kserve.example.com/serving/' });
    expect(proxy.init).to.deep.equal({ server_proxy_url: 'https://kserve.example.com/serving' });
  });

  it('refuses an unknown class, listing the known ones of that kind', () => {
    expect(inputError(() => catalog.validate('registry', 'os.system', {}))).to.equal(
      `registry_connector_class "os.system" is not a known registry connector class; known registry connector classes: ${OIP_REGISTRY}, ${MLFLOW_REGISTRY}, didyma.registry.KServeRegistryConnector`,
    );
    expect(inputError(() => catalog.validate('proxy', MLFLOW_REGISTRY, {}))).to.equal(
      `server_proxy_class "${MLFLOW_REGISTRY}" is not a server proxy class; known server proxy classes: ${OIP_PROXY}, ${MLFLOW_PROXY}, didyma.proxy.KServeServerProxy`,
    );
    expect(inputError(() => catalog.validate('proxy', undefined, {}))).to.match(/^server_proxy_class is required/);
  });

  it('names a missing required URL', () => {
    expect(inputError(() => catalog.validate('registry', OIP_REGISTRY, {}))).to.equal(
      'registry_connector_init.model_registry_url is required (or registry_connector_init.tracking_server_url)',
    );
    expect(inputError(() => catalog.validate('registry', MLFLOW_REGISTRY, { model_registry_url: 'https://mlflow.example.com', tracking_server_url: '', tracking_server_pat: 'x' }))).to.equal(
      'registry_connector_init.tracking_server_url is required: the connector reads the model signature from the tracking server',
    );
    expect(inputError(() => catalog.validate('proxy', OIP_PROXY, {}))).to.equal('server_proxy_init.server_proxy_url is required');
  });

  it('refuses unknown parameters, wrong types and a non-object init', () => {
    expect(inputError(() => catalog.validate('proxy', MLFLOW_PROXY, { server_proxy_url: 'https://m.example.com', module: 'evil' }))).to.equal(
      'server_proxy_init.module is not a parameter of didyma.proxy.MlflowServerProxy; its parameters are server_proxy_url, server_proxy_pat',
    );
    expect(inputError(() => catalog.validate('proxy', OIP_PROXY, { server_proxy_url: 8080 }))).to.equal('server_proxy_init.server_proxy_url must be a string');
    expect(inputError(() => catalog.validate('registry', OIP_REGISTRY, 'https://x.example.com'))).to.equal('registry_connector_init must be an object');
  });

  it('checks URLs with the URL policy, naming the field', () => {
    expect(inputError(() => catalog.validate('proxy', OIP_PROXY, { server_proxy_url: 'http://169.254.169.254/' }))).to.equal(
      'server_proxy_init.server_proxy_url is not allowed: 169.254.169.254 is a cloud metadata address',
    );
    expect(inputError(() => catalog.validate('registry', OIP_REGISTRY, { tracking_server_url: 'http://localhost:8090' }))).to.contain('registry_connector_init.tracking_server_url is not allowed');
    expect(inputError(() => catalog.validate('proxy', OIP_PROXY, { server_proxy_url: 'https://m.example.com/?a=1' }))).to.equal('server_proxy_init.server_proxy_url must not have a query or a fragment');
  });

  it('refuses a token that could not be a header value, without quoting it', () => {
    const message = inputError(() => catalog.validate('proxy', OIP_PROXY, { server_proxy_url: 'https://m.example.com', server_proxy_pat: 'abc\r\nX-Evil: 1' }));
    expect(message).to.equal('server_proxy_init.server_proxy_pat must be a token of printable characters without spaces (at most 8192)');
  });

  it('tells which parameters are secrets and strips them for display', () => {
    expect(catalog.secretKeys(OIP_REGISTRY)).to.deep.equal(['tracking_server_pat', 'server_proxy_pat']);
    expect(catalog.secretKeys(MLFLOW_PROXY)).to.deep.equal(['server_proxy_pat']);
    expect(catalog.publicInit(MLFLOW_REGISTRY, { model_registry_url: 'https://m.example.com', tracking_server_pat: 'dapi' })).to.deep.equal({ model_registry_url: 'https://m.example.com' });
  });

  it('creates connectors and proxies of the named class', () => {
    const deps = { http: new HttpClient({ policy: new UrlPolicy() }), deploymentKey: 'd' };
    expect(catalog.createRegistryConnector(MLFLOW_REGISTRY, { model_registry_url: 'https://m.example.com' }, deps)).to.be.instanceOf(MlflowRegistryConnector);
    expect(catalog.createServerProxy(OIP_PROXY, { server_proxy_url: 'https://m.example.com' }, deps)).to.be.instanceOf(OpenInferenceServerProxy);
    expect(() => catalog.createServerProxy(MLFLOW_REGISTRY, {}, deps)).to.throw('is not a server proxy');
    expect(() => catalog.createServerProxy('gone.Proxy', {}, deps)).to.throw('Connector class gone.Proxy is not enabled on this server');
    deps.http.close();
  });

  it('takes extra classes from the server configuration, but never replaces a built-in one', () => {
    const extra = BUILT_IN_CONNECTOR_CLASSES[OIP_PROXY] as ConnectorClass;
    const extended = new ConnectorCatalog({ policy: new UrlPolicy(), extra: { 'acme.proxy.Gateway': extra } });
    expect(extended.names('proxy')).to.include('acme.proxy.Gateway');
    expect(() => new ConnectorCatalog({ policy: new UrlPolicy(), extra: { [OIP_PROXY]: extra } })).to.throw('is built in and cannot be replaced');
  });
});
