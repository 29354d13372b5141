import fs from 'node:fs';
import { expect } from 'chai';
import { ConfigError, configTable, loadConfig, loadDevConfig, migrationConfig, webhookEndpointCap, webhookWorkspaceCap } from './config.js';
import { variables } from './variables.js';

describe('config', () => {
  it('gives every variable its documented default', () => {
    const config = loadConfig({});
    expect(config.authPort).to.equal(8080);
    expect(config.privatePort).to.equal(8081);
    expect(config.publicPort).to.equal(8082);
    expect(config.exposeTokenApi).to.equal(false);
    expect(config.databaseUrl).to.equal(undefined);
    expect(Object.isFrozen(config)).to.equal(true);
  });

  it('logs requests at info, and below it under `didyma dev` unless told otherwise', () => {
    expect(loadConfig({}).requestLogLevel).to.equal(undefined);
    expect(loadDevConfig({})).to.include({ devMode: true, requestLogLevel: 'debug' });
    expect(loadDevConfig({ DIDYMA_REQUEST_LOG_LEVEL: 'info' }).requestLogLevel).to.equal('info');
    expect(Object.isFrozen(loadDevConfig({}))).to.equal(true);
  });

  it('stops with a message naming the variable when a value is wrong', () => {
    const cases: Record<string, string> = {
      DIDYMA_AUTH_PORT: 'eighty',
      DIDYMA_EXPOSE_TOKEN_API: 'maybe',
      DATABASE_URL: 'mysql://x',
      DIDYMA_LOG_LEVEL: 'loud',
      DIDYMA_REQUEST_LOG_LEVEL: 'silent',
      DIDYMA_ACCESS_TOKEN_TTL_SECONDS: '1',
    };
    for (const [name, value] of Object.entries(cases)) {
      expect(() => loadConfig({ [name]: value }), name).to.throw(ConfigError, name);
    }
  });

  it('caps one workspace’s webhook deliveries below a process’s slots, three quarters of them unless set, and one endpoint’s at half', () => {
    expect(webhookWorkspaceCap(loadConfig({}))).to.equal(24);
    expect(webhookEndpointCap(loadConfig({}))).to.equal(16);
    expect(webhookWorkspaceCap(loadConfig({ DIDYMA_WEBHOOK_CONCURRENCY: '2' }))).to.equal(1);
    expect(webhookEndpointCap(loadConfig({ DIDYMA_WEBHOOK_CONCURRENCY: '2' }))).to.equal(1);
    expect(webhookWorkspaceCap(loadConfig({ DIDYMA_WEBHOOK_MAX_IN_FLIGHT_PER_WORKSPACE: '20' }))).to.equal(20);
    expect(webhookEndpointCap(loadConfig({ DIDYMA_WEBHOOK_MAX_IN_FLIGHT_PER_WORKSPACE: '4' })), 'within the workspace’s').to.equal(4);
    expect(() => loadConfig({ DIDYMA_WEBHOOK_MAX_IN_FLIGHT_PER_WORKSPACE: '32' })).to.throw(ConfigError, 'DIDYMA_WEBHOOK_MAX_IN_FLIGHT_PER_WORKSPACE="32": must be less than DIDYMA_WEBHOOK_CONCURRENCY (32)');
    expect(loadConfig({}).webhookMaxEndpoints).to.equal(20);
  });

  it('refuses a transaction pooler with the change feed LISTENing through it, and migrates with the migration URL directly', () => {
    const pooled = { DATABASE_URL: 'postgres://app@pooler/didyma', DATABASE_POOLER: 'transaction' };
    expect(() => loadConfig(pooled)).to.throw(ConfigError, 'DATABASE_POOLER="transaction": a transaction pooler drops LISTEN');
    expect(loadConfig({ ...pooled, DATABASE_LISTEN: 'off' }).databaseListen).to.equal(false);
    const config = loadConfig({ ...pooled, DATABASE_LISTEN_URL: 'postgres://app@db/didyma', DATABASE_MIGRATION_URL: 'postgres://owner@db/didyma' });
    expect(migrationConfig(config)).to.include({ databaseUrl: 'postgres://owner@db/didyma', databasePooler: 'none', databaseListen: false });
    expect(migrationConfig(loadConfig({ DATABASE_URL: 'postgres://app@db/didyma' })).databaseUrl).to.equal('postgres://app@db/didyma');
    expect(() => loadConfig({ DATABASE_RUNTIME_ROLE: 'app; drop table users' })).to.throw(ConfigError, 'DATABASE_RUNTIME_ROLE');
  });

  it('puts passwords given apart into the URLs that carry none, encoded, and leaves a URL\'s own', () => {
    const config = loadConfig({
      DATABASE_URL: 'postgres://app@pooler:6432/didyma?sslmode=verify-full',
      DATABASE_LISTEN_URL: 'postgres://app:own@db/didyma',
      DATABASE_PASSWORD: 'p@ss/w:rd#1',
      DATABASE_MIGRATION_URL: 'postgres://owner@db/didyma',
      DATABASE_MIGRATION_PASSWORD: 'owner secret',
      DIDYMA_AMQP_URL: 'amqps://app@broker/vhost',
      DIDYMA_AMQP_PASSWORD: 'q%q',
    });
    expect(config.databaseUrl).to.equal('postgres://app:p%40ss%2Fw%3Ard%231@pooler:6432/didyma?sslmode=verify-full');
    expect(decodeURIComponent(new URL(config.databaseUrl!).password)).to.equal('p@ss/w:rd#1');
    expect(config.databaseListenUrl).to.equal('postgres://app:own@db/didyma');
    expect(decodeURIComponent(new URL(config.databaseMigrationUrl!).password)).to.equal('owner secret');
    expect(decodeURIComponent(new URL(config.amqpUrl!).password)).to.equal('q%q');
  });

  it('takes a credentials namespace only as a valid namespace name, none by default', () => {
    expect(loadConfig({}).kubeCredentialsNamespace).to.equal(undefined);
    expect(loadConfig({ DIDYMA_KUBE_CREDENTIALS_NAMESPACE: 'didyma-credentials' }).kubeCredentialsNamespace).to.equal('didyma-credentials');
    for (const value of ['Didyma', 'didyma_credentials', '-didyma', 'didyma-', 'a'.repeat(64), 'ns/other']) {
      expect(() => loadConfig({ DIDYMA_KUBE_CREDENTIALS_NAMESPACE: value }), value).to.throw(ConfigError, 'DIDYMA_KUBE_CREDENTIALS_NAMESPACE');
    }
  });

  it('reads the KServe namespaces opened to workspaces, and refuses a malformed list at start-up', () => {
    expect(loadConfig({}).kserveNamespaces.size).to.equal(0);
    const grants = loadConfig({ DIDYMA_KSERVE_NAMESPACES: 'models=team-a|team-b, shared=*' }).kserveNamespaces;
    expect([...grants]).to.deep.equal([
      ['models', ['team-a', 'team-b']],
      ['shared', '*'],
    ]);
    for (const value of ['models', 'Models=a', 'models=a,models=b', 'models = ']) {
      expect(() => loadConfig({ DIDYMA_KSERVE_NAMESPACES: value }), value).to.throw(ConfigError, 'DIDYMA_KSERVE_NAMESPACES');
    }
  });

  it('is documented variable by variable in docs/configuration.md, as `npm run docs:config` writes it', () => {
    const page = fs.readFileSync(new URL('../../docs/configuration.md', import.meta.url), 'utf8');
    const table = /<!-- config-table:start -->\n([\s\S]*)\n<!-- config-table:end -->/.exec(page)?.[1];
    expect(table, 'docs/configuration.md has lost its config-table markers').to.be.a('string');
    for (const v of Object.values(variables)) expect(table, v.name).to.include(`| \`${v.name}\` |`);
    expect(table, 'docs/configuration.md is stale: run `npm run docs:config`').to.equal(configTable());
    expect(configTable().split('\n')).to.have.length(Object.keys(variables).length + 2);
  });
});
