// Baseline "naive enqueue" of the bench's queue comparison: the POST a team
// would write by hand. One INSERT per request (the server's own
// synchronous_commit), then one publish on a confirm channel awaited per
// request, 201 with the id. No auth, no schema, no sessions, no fairness.
// usage: node --import tsx bench/baselines/naive-enqueue.ts PORT QUEUE
import crypto from 'node:crypto';
import amqp from 'amqplib';
import express from 'express';
import { amqpUrl, argument, newPool, stopOnSigterm } from './common.js';

const port = Number(argument(0, 'PORT'));
const queue = argument(1, 'QUEUE');

const pool = newPool();
const connection = await amqp.connect(amqpUrl(), { noDelay: true }); // as the platform connects
const channel = await connection.createConfirmChannel();
await channel.assertQueue(queue, { durable: true, arguments: { 'x-queue-type': 'quorum' } });

const published = (id: string) =>
  new Promise<void>((resolve, reject) => channel.sendToQueue(queue, Buffer.from(id), { persistent: true }, (error) => (error ? reject(error) : resolve())));

const app = express();
app.disable('x-powered-by');
app.use(express.json());
app.post('/session/:sessionId/invocation', async (req, res) => {
  const { type, request } = req.body as { type?: string; request?: { type?: string; body?: string } };
  if (typeof type !== 'string' || typeof request?.type !== 'string' || typeof request.body !== 'string') {
    res.status(400).json({ message: 'type, request.type and request.body are required' });
    return;
  }
  const id = crypto.randomUUID();
  try {
    await pool.query(
      `insert into baseline.invocations (id, workspace_id, session_id, user_id, model_id, type, request_type, body, status) values ($1, 1, $2, 1, 1, $3, $4, $5, 'QUEUED')`,
      [id, req.params.sessionId, type, request.type, request.body],
    );
    await published(id);
    res.status(201).json({ id });
  } catch {
    res.status(503).json({ message: 'unavailable' });
  }
});
app.get('/healthz', (_req, res) => {
  res.json({ status: 'ok' });
});
const server = app.listen(port, '127.0.0.1');
server.keepAliveTimeout = 65_000;
stopOnSigterm(server, async () => {
  await connection.close().catch(() => undefined);
  await pool.end();
});
