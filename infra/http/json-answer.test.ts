import { expect } from 'chai';
import express from 'express';
import { listen } from '../../test/support/platform.js';
import { checkJsonAnswer, watchJsonAnswer, type JsonAnswer } from './json-answer.js';

describe('JSON answers: one hook for every part that must see them', () => {
  it('runs the checks in order, each able to replace the answer, sends what they leave, then shows it to every watcher', async () => {
    const seen: Array<[string, JsonAnswer]> = [];
    const app = express();
    app.get('/', (_req, res) => {
      watchJsonAnswer(res, (answer) => seen.push(['first watcher', answer]));
      checkJsonAnswer(res, (answer) => ({ status: answer.status, body: { ...(answer.body as object), checked: 1 } }));
      checkJsonAnswer(res, (answer) => ((answer.body as { checked?: number }).checked === 1 ? { status: 500, body: { message: 'replaced' } } : answer));
      watchJsonAnswer(res, (answer) => seen.push(['second watcher', answer]));
      res.status(201).json({ id: 'a' });
    });
    const { url, server } = await listen(app);
    try {
      const reply = await fetch(url);
      expect(reply.status).to.equal(500);
      expect(await reply.json()).to.deep.equal({ message: 'replaced' });
      const sent = { status: 500, body: { message: 'replaced' } };
      expect(seen).to.deep.equal([
        ['first watcher', sent],
        ['second watcher', sent],
      ]);
    } finally {
      server.close();
    }
  });
});
