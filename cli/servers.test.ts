import { expect } from 'chai';
import { startTestPlatform, type TestPlatform } from '../test/support/platform.js';
import { startServers, type RunningServer } from './servers.js';

describe('startServers with a metrics port', () => {
  let t: TestPlatform;
  let running: RunningServer[];
  const urlOf = (name: RunningServer['name']) => running.find((server) => server.name === name)!.url;

  before(async () => {
    t = await startTestPlatform({ authPort: 0, privatePort: 0, publicPort: 0, metricsPort: 0, metricsToken: 'scrape-secret' });
    running = await startServers(t.platform, ['auth', 'private', 'public']);
  });

  after(async () => {
    for (const server of running ?? []) await server.close();
    await t?.close();
  });

  it('serves every server’s figures on the metrics port, each once, and none on the API ports', async () => {
    const scrape = await fetch(`${urlOf('metrics')}/metrics`, { headers: { authorization: 'Bearer scrape-secret' } });
    expect(scrape.status).to.equal(200);
    const text = await scrape.text();
    // The private server's database figures and the process figures every server shares, the latter once.
    expect(text).to.include('didyma_database_metrics_up 1');
    expect(text.match(/^# TYPE didyma_process_cpu_seconds_total /gm)).to.have.length(1);
    for (const name of ['auth', 'private', 'public'] as const) {
      expect((await fetch(`${urlOf(name)}/metrics`)).status, name).to.equal(404);
      expect((await fetch(`${urlOf(name)}/healthz`)).status, name).to.equal(200);
    }
  });

  it('still asks for the token there, and answers nothing but /metrics', async () => {
    expect((await fetch(`${urlOf('metrics')}/metrics`)).status).to.equal(401);
    expect((await fetch(`${urlOf('metrics')}/healthz`)).status).to.equal(404);
    expect((await fetch(`${urlOf('metrics')}/api/auth/login`, { method: 'POST' })).status).to.equal(404);
  });
});
