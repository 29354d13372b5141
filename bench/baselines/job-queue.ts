// Baseline "job-queue library" of the bench's queue comparison: what a team
// would take from a library instead of writing a queue, pg-boss on the same
// PostgreSQL. `api` is the POST: one `send` per request, 201 with the job id.
// `worker` drains the queue with the same model call as the platform's
// executor, at the same concurrency (8): one worker fetching batches of 8
// (pg-boss fetches again at once while batches come back full, and polls
// otherwise), the batch's calls made at once, each job's result stored by
// pg-boss on its completion (its result write).
// usage: node --import tsx bench/baselines/job-queue.ts PORT api QUEUE
//        node --import tsx bench/baselines/job-queue.ts PORT worker QUEUE INFER_URL
import express from 'express';
import { PgBoss, type JobResult } from 'pg-boss';
import { argument, callModel, databaseUrl, POOL_MAX, stopOnSigterm } from './common.js';

const CONCURRENCY = 8; // the platform executor's default (DIDYMA_EXECUTOR_CONCURRENCY)

interface JobData {
  type: string;
  request_type: string;
  body: string;
  session_id: string;
}

const port = Number(argument(0, 'PORT'));
const mode = argument(1, 'api or worker');
const queue = argument(2, 'QUEUE');

// Maintenance and schedules are the worker's: the API process only sends.
const boss = new PgBoss({ connectionString: databaseUrl(), max: POOL_MAX, ...(mode === 'api' ? { supervise: false, schedule: false } : {}) });
boss.on('error', (error) => console.error(error));
await boss.start();
await boss.createQueue(queue);

const app = express();
app.disable('x-powered-by');
app.get('/healthz', (_req, res) => {
  res.json({ status: 'ok' });
});

if (mode === 'api') {
  app.use(express.json());
  app.post('/session/:sessionId/invocation', async (req, res) => {
    const { type, request } = req.body as { type?: string; request?: { type?: string; body?: string } };
    if (typeof type !== 'string' || typeof request?.type !== 'string' || typeof request.body !== 'string') {
      res.status(400).json({ message: 'type, request.type and request.body are required' });
      return;
    }
    try {
      const id = await boss.send(queue, { type, request_type: request.type, body: request.body, session_id: req.params.sessionId } satisfies JobData);
      res.status(201).json({ id });
    } catch {
      res.status(503).json({ message: 'unavailable' });
    }
  });
} else if (mode === 'worker') {
  const inferUrl = argument(3, 'INFER_URL');
  await boss.work<JobData>(queue, { batchSize: CONCURRENCY, burstWhenBatchFull: true, pollingIntervalSeconds: 0.5, perJobResults: true }, async (jobs) =>
    Promise.all(
      jobs.map(async (job): Promise<JobResult> => {
        try {
          return { id: job.id, status: 'completed', output: { response: await callModel(inferUrl, job.data.body) } };
        } catch (error) {
          return { id: job.id, status: 'failed', output: { error: String(error) } };
        }
      }),
    ),
  );
} else {
  throw new Error(`mode must be api or worker, not ${JSON.stringify(mode)}`);
}

const server = app.listen(port, '127.0.0.1');
server.keepAliveTimeout = 65_000;
stopOnSigterm(server, () => boss.stop({ graceful: true }));
