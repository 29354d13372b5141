import { expect } from 'chai';
import type { AuditEntry } from '../features/audit/trail.js';
import { tenant } from '../test/support/fixtures.js';
import { startTestPlatform, unique, type TestPlatform } from '../test/support/platform.js';
import { startSilentServer, type SilentServer } from '../test/support/silent-server.js';
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

describe('startServers: closing while a request waits on a peer', () => {
  let t: TestPlatform;
  let silent: SilentServer;

  before(async () => {
    t = await startTestPlatform({ privatePort: 0, shutdownDrainSeconds: 0, shutdownGraceSeconds: 2, storageHeadersTimeoutMs: 120_000 });
    silent = await startSilentServer();
  });
  after(async () => {
    await silent?.close();
    await t?.close();
  });

  it('resolves only once the request whose connection it cut has handed in its audit record', async () => {
    const [server] = await startServers(t.platform, ['private']);
    const owner = await tenant(t);
    const records: AuditEntry[] = [];
    const trail = t.platform.audit;
    const record = trail.record.bind(trail);
    trail.record = (entry) => {
      records.push(entry);
      record(entry);
    };
    const accepted = silent.accepted();
    const body = { storage_key: unique('s3'), storage_class: 'didyma.storage.S3Storage', connector_init: { access_key: 'ak', secret_key: 'sk', endpoint: silent.url, bucket_name: 'files' } };
    const registration = fetch(`${server!.url}/api/storage`, { method: 'POST', headers: { authorization: `Bearer ${owner.token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) }).catch((error: Error) => error);
    await accepted;
    await server!.close();
    // The platform closes next: a record handed in later would find its database gone.
    expect(records.map(({ action, outcome }) => ({ action, outcome }))).to.deep.include({ action: 'createStorage', outcome: 499 });
    expect(await registration).to.be.an('error');
  });
});
