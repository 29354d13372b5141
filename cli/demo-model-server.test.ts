import { expect } from 'chai';
import { didymaProcess, exitOf } from '../test/support/didyma-process.js';
import { until } from '../test/support/until.js';

const FLOWER = { inputs: [{ name: 'input-0', shape: [1, 4], datatype: 'FP64', data: [5.1, 3.5, 1.4, 0.2] }] };

describe('didyma demo-model-server', function () {
  this.timeout(60_000);

  it('serves its models under --version, each inference held for --delay-ms while other requests are answered', async () => {
    const server = didymaProcess('demo-model-server', ['demo-model-server', '--port', '0', '--version', 'cli-7', '--delay-ms', '400'], {});
    try {
      await until(async () => /on http:\/\/\S+/.test(server.standardOutput) || !server.running, 'the demo model server to listen', 30_000);
      const base = server.standardOutput.match(/on (http:\/\/\S+)/)?.[1];
      expect(base, server.tail()).to.be.a('string');
      expect(server.standardOutput).to.include('iris-classifier cli-7');
      expect((await fetch(`${base}/v2/models/iris-classifier/versions/cli-7/ready`)).status).to.equal(200);
      expect((await fetch(`${base}/v2/models/iris-classifier/versions/1/ready`)).status).to.equal(404);
      // Held, not busy: five requests sent after the inference are answered while it waits out its delay.
      const answered: string[] = [];
      const inference = fetch(`${base}/v2/models/iris-classifier/versions/cli-7/infer`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(FLOWER) }).then((reply) => {
        answered.push('inference');
        return reply;
      });
      for (let i = 0; i < 5; i++) {
        expect((await fetch(`${base}/v2/models/iris-classifier/versions/cli-7/ready`)).status).to.equal(200);
        answered.push('ready');
      }
      expect((await inference).status).to.equal(200);
      expect(answered).to.deep.equal(['ready', 'ready', 'ready', 'ready', 'ready', 'inference']);
    } finally {
      await server.stop();
    }
  });

  it('refuses a --delay-ms that is not a whole number of milliseconds', async () => {
    const server = didymaProcess('demo-model-server', ['demo-model-server', '--port', '0', '--delay-ms', '1.5s'], {});
    expect((await exitOf(server, 30_000)).code).to.not.equal(0);
    expect(server.tail()).to.include('a whole number of milliseconds');
  });
});
