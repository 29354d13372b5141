// Baseline "naive read" of the bench's queue comparison: express and pg, one
// SELECT by primary key per GET. No auth, no tenancy.
// usage: node --import tsx bench/baselines/naive-read.ts PORT
import express from 'express';
import { argument, newPool, stopOnSigterm } from './common.js';

const port = Number(argument(0, 'PORT'));
const pool = newPool();

const app = express();
app.disable('x-powered-by');
app.get('/session/:sessionId/invocation/:id', async (req, res) => {
  try {
    const { rows } = await pool.query('select * from baseline.invocations where id = $1', [req.params.id]);
    if (rows.length) res.json(rows[0]);
    else res.status(404).json({ message: 'not found' });
  } catch {
    res.status(503).json({ message: 'unavailable' });
  }
});
app.get('/healthz', (_req, res) => {
  res.json({ status: 'ok' });
});
const server = app.listen(port, '127.0.0.1');
server.keepAliveTimeout = 65_000;
stopOnSigterm(server, () => pool.end());
