import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { UrlPolicy } from '../net/url-policy.js';
import { StorageClasses, S3_STORAGE } from './classes.js';

// The S3 client opens its own connections: they must resolve through the
// outbound URL policy at connect time, like every other client's.

describe('S3 storage: every connection is checked against the outbound URL policy after DNS', () => {
  let server: http.Server;
  let port: number;
  let requests = 0;
  // A name that only the policy's resolver knows, pointing at loopback (DNS rebinding, or a hostile record).
  const resolve = async (host: string) => (host === 'storage.example.test' ? [{ address: '127.0.0.1', family: 4 }] : []);

  before(async () => {
    server = http.createServer((_req, res) => {
      requests += 1;
      res.writeHead(404, { 'content-type': 'application/xml' }).end('<Error><Code>NoSuchBucket</Code></Error>');
    });
    await new Promise<void>((ready) => server.listen(0, '127.0.0.1', ready));
    port = (server.address() as AddressInfo).port;
  });
  after(() => new Promise((done) => server.close(done)));

  const backendUnder = (policy: UrlPolicy) =>
    new StorageClasses({ lookupFor: (port) => policy.lookupFor(port) }).backend(S3_STORAGE, {
      endpoint: `http://storage.example.test:${port}`,
      access_key: 'key',
      secret_key: 'very-secret',
      bucket_name: 'files',
    });

  it('refuses to connect when the name resolves to an address the policy forbids, in the words of an unreachable endpoint', async () => {
    requests = 0;
    const refused = await backendUnder(new UrlPolicy({ resolve })).check().then(() => undefined, (error: Error) => error);
    expect(refused?.message).to.equal(`bucket files not reachable at endpoint http://storage.example.test:${port}: the endpoint could not be reached.`);
    expect(requests, 'nothing reached the address').to.equal(0);
  });

  it('says the same of an allowed address where nothing listens', async () => {
    const closed = new StorageClasses({ lookupFor: (p) => new UrlPolicy({ resolve, allowLoopback: true }).lookupFor(p) }).backend(S3_STORAGE, {
      endpoint: 'http://storage.example.test:1',
      access_key: 'key',
      secret_key: 'very-secret',
      bucket_name: 'files',
    });
    const refused = await closed.check().then(() => undefined, (error: Error) => error);
    expect(refused?.message).to.equal('bucket files not reachable at endpoint http://storage.example.test:1: the endpoint could not be reached.');
  });

  it('connects through the policy when it allows the address (the system resolver knows nothing of that name)', async () => {
    requests = 0;
    const answered = await backendUnder(new UrlPolicy({ resolve, allowLoopback: true })).check().then(() => undefined, (error: Error) => error);
    expect(answered?.message).to.match(/the bucket does not exist/);
    expect(requests).to.be.greaterThan(0);
  });
});
