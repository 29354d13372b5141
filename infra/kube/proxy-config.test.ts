import { expect } from 'chai';
import { deploymentEntry, entryText, parseEntries } from './proxy-config.js';

const spec = {
  workspace: 'default',
  deploymentKey: 'iris',
  registry: { className: 'didyma.registry.OpenInferenceRegistryConnector', init: { tracking_server_url: 'http://t', model_registry_url: 'http://r' } },
  serverProxy: { className: 'didyma.proxy.OpenInferenceServerProxy', init: { server_proxy_url: 'http://s' } },
  secretRef: { name: 'default-iris-12345678-credentials' },
};

describe('proxy configuration entries', () => {
  it('renders the same text for equal specs whatever the order of their keys', () => {
    const reordered = { ...spec, registry: { ...spec.registry, init: { model_registry_url: 'http://r', tracking_server_url: 'http://t' } } };
    expect(entryText(deploymentEntry(reordered))).to.equal(entryText(deploymentEntry(spec)));
  });

  it('names the Secret instead of holding credentials', () => {
    const entry = deploymentEntry(spec);
    expect(entry.secretRef).to.deep.equal({ name: 'default-iris-12345678-credentials' });
    expect(entry).to.deep.include({ kind: 'ModelDeployment', workspace: 'default', key: 'iris' });
  });

  it('reads entries back and skips malformed ones', () => {
    const { entries, malformed } = parseEntries({ 'mdep.a': entryText(deploymentEntry(spec)), 'mdep.b': '{not json', 'mdep.c': '{"kind":"Other"}' });
    expect([...entries.keys()]).to.deep.equal(['mdep.a']);
    expect(malformed).to.deep.equal(['mdep.b', 'mdep.c']);
  });
});
