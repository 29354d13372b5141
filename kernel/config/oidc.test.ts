import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { inspect } from 'node:util';
import { expect } from 'chai';
import { ConfigError, loadConfig } from './config.js';

const connection = (extra: Record<string, unknown> = {}) => ({
  id: 'corp',
  issuer: 'https://login.example.test/realms/corp',
  client_id: 'didyma',
  client_secret_env: 'CORP_SECRET',
  workspace_roles: [{ group: 'team-a', workspace: 'team-a', role: 'supervisor' }],
  ...extra,
});
const load = (connections: unknown, env: Record<string, string> = { CORP_SECRET: 's3cret' }) =>
  loadConfig({ DIDYMA_OIDC_CONNECTIONS: JSON.stringify(connections), ...env });

describe('OpenID connections in the configuration', () => {
  it('reads a connection with its defaults and its secret from the variable it names', () => {
    const [corp] = load([connection()]).oidcConnections;
    expect(corp).to.deep.include({
      id: 'corp',
      displayName: 'corp',
      clientId: 'didyma',
      scopes: ['openid', 'email', 'profile'],
      groupsClaim: ['groups'],
      workspaceGrants: [{ group: 'team-a', workspace: 'team-a', role: 'supervisor' }],
      staffGroups: [],
      allowedDomains: [],
      createUsers: false,
      requireMappedGroup: true,
    });
    expect(corp!.clientSecret!.reveal()).to.equal('s3cret');
    expect(loadConfig({}).oidcConnections).to.deep.equal([]);
  });

  it('reads the secret from a file, and never prints it', () => {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'oidc-')), 'secret');
    fs.writeFileSync(file, 'from-a-file\n');
    const config = load([connection({ client_secret_env: undefined, client_secret_file: file, groups_claim: 'realm_access.roles' })], {});
    const [corp] = config.oidcConnections;
    expect(corp!.clientSecret!.reveal()).to.equal('from-a-file');
    expect(corp!.groupsClaim).to.deep.equal(['realm_access', 'roles']);
    expect(JSON.stringify(config)).not.to.contain('from-a-file');
    expect(inspect(config, { depth: 10 })).not.to.contain('from-a-file');
    expect(`${corp!.clientSecret}`).not.to.contain('from-a-file');
  });

  it('stops the start with a message naming what is wrong', () => {
    const cases: Array<[unknown, RegExp]> = [
      ['not json', /JSON array/],
      [{ id: 'x' }, /JSON array/],
      [[connection({ id: 'Corp!' })], /id: expected/],
      [[connection({ issuer: 'http://login.example.test' })], /issuer: expected an https URL/],
      [[connection({ scopes: ['email'] })], /must include openid/],
      [[connection({ workspace_roles: [{ group: 'g', workspace: 'w', role: 'owner' }] })], /role: expected user or supervisor/],
      [[connection({ allowed_email_domains: ['not a domain'] })], /not a domain name/],
      [[connection({ create_users: 'yes' })], /create_users: expected true or false/],
      [[connection({ client_secrets: 'x' })], /unknown field\(s\) client_secrets/],
      [[connection(), connection()], /used twice/],
      [[connection({ client_secret_file: '/x' })], /give one of them/],
    ];
    for (const [value, message] of cases) {
      expect(() => load(value), JSON.stringify(value)).to.throw(ConfigError, message);
    }
    expect(() => load([connection()], {})).to.throw(ConfigError, /DIDYMA_OIDC_CONNECTIONS.*client secret \(variable CORP_SECRET\) is missing/);
  });

  it('accepts plain http for a provider on a loopback host only', () => {
    expect(load([connection({ issuer: 'http://127.0.0.1:57080/realms/t' })]).oidcConnections[0]!.issuer).to.equal('http://127.0.0.1:57080/realms/t');
  });
});
