import { expect } from 'chai';
import { configEntryKey, proxyConfigMapName, proxyConfigSelector, resourceName, secretName, workspaceLabel } from './names.js';

const DNS_LABEL = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;

describe('Kubernetes names', () => {
  it('names a resource after its workspace and key, with a digest', () => {
    expect(resourceName('deployment', 'default', 'iris')).to.match(/^default-iris-[0-9a-f]{8}$/);
  });

  it('gives the same name every time (the API, the resync and the executor compute it separately)', () => {
    expect(resourceName('storage', 'team_a', 'Files.v2')).to.equal(resourceName('storage', 'team_a', 'Files.v2'));
  });

  it('keeps names apart where the readable part collides', () => {
    const names = [
      resourceName('deployment', 'a-b', 'c'),
      resourceName('deployment', 'a', 'b-c'),
      resourceName('deployment', 'a', 'B-c'),
      resourceName('storage', 'a', 'b-c'),
    ];
    expect(new Set(names).size).to.equal(4);
  });

  for (const [workspace, key] of [
    ['default', 'iris'],
    ['_under_score_', '-x'],
    ['w'.repeat(63), 'K'.repeat(63)],
    ['--', '...'],
    ['team_a', 'Model.Card_v2'],
  ] as const) {
    it(`makes a DNS-1123 label of ${JSON.stringify([workspace.slice(0, 12), key.slice(0, 12)])}`, () => {
      const name = resourceName('deployment', workspace, key);
      expect(name).to.match(DNS_LABEL);
      expect(secretName(name, 'f'.repeat(32))).to.have.length.at.most(253).and.match(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/);
      expect(configEntryKey('deployment', name)).to.match(/^mdep\.[a-z0-9-]+$/);
    });
  }

  it('uses the workspace name as label value when Kubernetes accepts it, a stable digest otherwise', () => {
    expect(workspaceLabel('default')).to.equal('default');
    expect(workspaceLabel('team_a-1')).to.equal('team_a-1');
    expect(workspaceLabel('_private')).to.match(/^ws-[0-9a-f]{16}$/);
    expect(workspaceLabel('_private')).to.equal(workspaceLabel('_private'));
  });

  it('names one proxy ConfigMap per workspace, deterministic and apart where the readable part collides', () => {
    expect(proxyConfigMapName('didyma-proxy-config', 'team_a')).to.match(/^didyma-proxy-config-team-a-[0-9a-f]{8}$/);
    expect(proxyConfigMapName('p', 'team_a')).to.equal(proxyConfigMapName('p', 'team_a'));
    expect(proxyConfigMapName('p', 'team_a')).to.not.equal(proxyConfigMapName('p', 'team-a'));
    expect(proxyConfigMapName('p', '___')).to.match(/^p-[0-9a-f]{8}$/);
    expect(proxyConfigMapName('p', 'x'.repeat(300)).length).to.be.at.most(253);
  });

  it('selects the proxy ConfigMaps by a label whose value Kubernetes accepts, however long the prefix', () => {
    expect(proxyConfigSelector('didyma-proxy-config')).to.equal('didyma.io/proxy-config=didyma-proxy-config');
    expect(proxyConfigSelector('a'.repeat(70))).to.match(/^didyma\.io\/proxy-config=proxy-config-[0-9a-f]{16}$/);
  });
});
