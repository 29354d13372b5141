import { expect } from 'chai';
import { loadConfig } from '../kernel/config/config.js';
import { egressPolicy, ownEndpoints } from './egress.js';

describe('egress policy from the configuration', () => {
  it("names the platform's own database, broker, Prometheus and SMTP server, default ports included", () => {
    const config = loadConfig({
      DATABASE_URL: 'postgres://didyma:pw@postgresql.data.svc:6432/didyma',
      DIDYMA_AMQP_URL: 'amqps://user:pw@rabbitmq',
      PROMETHEUS_URL: 'http://[fd00::9]',
      DIDYMA_SMTP_URL: 'smtps://mail.example.com',
    });
    expect(ownEndpoints(config)).to.deep.equal([
      { host: 'postgresql.data.svc', port: 6432 },
      { host: 'rabbitmq', port: 5671 },
      { host: 'fd00::9', port: 80 },
      { host: 'mail.example.com', port: 465 },
    ]);
    expect(ownEndpoints(loadConfig({}))).to.deep.equal([]);
  });

  it('allows private addresses only inside DIDYMA_EGRESS_ALLOW_CIDRS, and loopback only in development mode', async () => {
    const cluster = egressPolicy(loadConfig({ DIDYMA_EGRESS_ALLOW_CIDRS: '10.244.0.0/16, 10.96.0.0/12' }));
    expect(await cluster.refusalOf(new URL('http://10.244.1.5:8080/'))).to.equal(null);
    expect(await cluster.refusalOf(new URL('http://172.20.0.5/'))).to.contain('private address');
    expect(await cluster.refusalOf(new URL('http://127.0.0.1:8090/'))).to.contain('loopback');
    const development = egressPolicy(loadConfig({ DIDYMA_DEV_MODE: 'true' }));
    expect(await development.refusalOf(new URL('http://127.0.0.1:8090/'))).to.equal(null);
    expect(await development.refusalOf(new URL('http://10.244.1.5:8080/'))).to.contain('private address');
  });

  it('refuses a malformed network at start-up, naming it', () => {
    expect(() => egressPolicy(loadConfig({ DIDYMA_EGRESS_ALLOW_CIDRS: '10.0.0.0/8,pods' }))).to.throw('Invalid network "pods"');
  });

  it("refuses the platform's own database even inside the allowed networks", async () => {
    const policy = egressPolicy(loadConfig({ DIDYMA_EGRESS_ALLOW_CIDRS: '10.96.0.0/12', DATABASE_URL: 'postgres://u:p@10.96.0.12/didyma' }));
    expect(await policy.refusalOf(new URL('http://10.96.0.12:8080/'))).to.equal("10.96.0.12 is one of the platform's own services");
  });
});
