import { expect } from 'chai';
import express from 'express';
import { listen } from '../../test/support/platform.js';
import { inFlightLimit, jsonDeeperThan } from './limits.js';

describe('jsonDeeperThan', () => {
  it('counts the nesting of arrays and objects, not brackets inside strings', () => {
    expect(jsonDeeperThan('[[[]]]', 3)).to.equal(false);
    expect(jsonDeeperThan('[[[[]]]]', 3)).to.equal(true);
    expect(jsonDeeperThan('{"a":{"b":[1]}}', 3)).to.equal(false);
    expect(jsonDeeperThan('{"a":"[[[[[[\\"[[[["}', 2)).to.equal(false);
    expect(jsonDeeperThan(Buffer.from('['.repeat(1000)), 100)).to.equal(true);
  });
});

describe('inFlightLimit', () => {
  it('refuses requests beyond the limit with 503 and Retry-After, and admits again once they finish', async () => {
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    const app = express();
    app.use(inFlightLimit(2));
    app.get('/slow', async (_req, res) => {
      await held;
      res.json({ ok: true });
    });
    const { url, server } = await listen(app);
    try {
      const slow = [fetch(`${url}/slow`), fetch(`${url}/slow`)];
      await new Promise((resolve) => setTimeout(resolve, 100));
      const refused = await fetch(`${url}/slow`);
      expect(refused.status).to.equal(503);
      expect(refused.headers.get('retry-after')).to.equal('1');
      expect(await refused.json()).to.include({ message_code: 'overloaded' });
      release();
      expect((await Promise.all(slow)).map((r) => r.status)).to.deep.equal([200, 200]);
      expect((await fetch(`${url}/slow`)).status).to.equal(200);
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });
});
