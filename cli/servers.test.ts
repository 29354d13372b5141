import net from 'node:net';
import { expect } from 'chai';
import { freePorts } from '../test/support/model-servers.js';
import { login, makeUser, makeWorkspace, startTestPlatform, type TestPlatform } from '../test/support/platform.js';
import { startServers } from './servers.js';

describe('server shutdown under keep-alive load', () => {
  let t: TestPlatform;
  let token: string;
  let port: number;

  before(async () => {
    [port] = (await freePorts(1)) as [number];
    t = await startTestPlatform({ publicPort: port, shutdownDrainSeconds: 10, shutdownGraceSeconds: 20 });
    const user = await makeUser(t.platform);
    const ws = await makeWorkspace(t.platform, [[user, 'user']]);
    token = (await login(t.auth, user, ws.name)).access;
  });
  after(() => t.close());

  it('answers every request sent before the drain, tells clients to go, and closes once they have', async () => {
    const [server] = await startServers(t.platform, ['public']);
    const url = `${server!.url}/api/model`;
    const outcomes: Array<number | string> = [];
    let told = 0;
    // Like a load balancer's clients: back to back on kept-alive connections, until an answer says the connection closes.
    const client = async () => {
      for (;;) {
        try {
          const reply = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
          await reply.arrayBuffer();
          outcomes.push(reply.status);
          if (reply.headers.get('connection') === 'close') return void told++;
        } catch (error) {
          outcomes.push(String((error as { cause?: { code?: string } }).cause?.code ?? error));
          return;
        }
      }
    };
    const clients = Array.from({ length: 16 }, client);
    await new Promise((resolve) => setTimeout(resolve, 300));
    t.platform.shutdown.draining = true;
    const ready = await fetch(`${server!.url}/readyz`);
    expect(ready.status, 'not ready while draining').to.equal(503);
    const closing = server!.close();
    await Promise.all(clients);
    await closing;
    expect(outcomes.filter((outcome) => typeof outcome !== 'number'), 'requests without an answer').to.deep.equal([]);
    expect(outcomes.every((status) => status === 200), 'every answer a 200').to.equal(true);
    expect(told, 'every client told to close its connection').to.equal(16);
    expect(outcomes.length).to.be.greaterThan(16);
    const refused = await new Promise((resolve) => net.connect(port, '127.0.0.1').once('connect', () => resolve('connected')).once('error', (error: NodeJS.ErrnoException) => resolve(error.code)));
    expect(refused, 'no longer listening once the clients left').to.equal('ECONNREFUSED');
  });
});
