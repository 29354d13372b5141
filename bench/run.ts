// `make bench`: every figure of one run side by side, printed as a table and
// written to bench/results/<date>.json. The platform runs as child processes
// (auth, private, public, executor) from the sources, on the real PostgreSQL
// and RabbitMQ of scripts/services; the load comes from autocannon in this
// process. Nothing here is a test: no figure fails the build.
//
// Environment: TEST_DATABASE_URL and TEST_AMQP_URL (scripts/services/all.sh env
// postgres rabbitmq); optional BENCH_DURATION_SEC (10), BENCH_CONNECTIONS (32),
// BENCH_MODEL_DELAY_MS (10), BENCH_SESSIONS (32), BENCH_LOG_LEVEL (info).
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import knexFactory from 'knex';
import amqp from 'amqplib';
import { Client } from '../test/support/http.js';
import { toInferenceRequest } from '../core/connectors/open-inference/tensors.js';
import { cli, freePort, runCli, script, startNode, waitReady, type Child } from './lib/processes.js';
import { load, percentile, type LoadResult } from './lib/load.js';
import { renderTable, type BenchReport } from './lib/report.js';
import { brokerHop, postgresRoundTrips } from './lib/floors.js';

const env = (name: string, fallback: string) => process.env[name] || fallback;
const DURATION = Number(env('BENCH_DURATION_SEC', '10'));
const CONNECTIONS = Number(env('BENCH_CONNECTIONS', '32'));
const MODEL_DELAY_MS = Number(env('BENCH_MODEL_DELAY_MS', '10'));
const SESSIONS = Number(env('BENCH_SESSIONS', '32'));
const LOG_LEVEL = env('BENCH_LOG_LEVEL', 'info');
const EXECUTOR_CONCURRENCY = 8; // the platform's default (MODELPLANE_EXECUTOR_CONCURRENCY)
const WARMUP_SEC = 3;
const DRAIN_TIMEOUT_MS = 240_000;

const IRIS = JSON.stringify({ sepal_length: 5.1, sepal_width: 3.5, petal_length: 1.4, petal_width: 0.2 });
const INVOKE = JSON.stringify({ type: 'PREDICT', request: { type: 'FEATURES', body: IRIS } });
const PASSWORD = 'Correct-Horse-Battery-42';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: run \`make bench\` (it starts PostgreSQL and RabbitMQ with scripts/services and exports their URLs).`);
  return value;
}

async function main() {
  const started = new Date();
  const loadBefore = os.loadavg();
  const adminUrl = required('TEST_DATABASE_URL');
  const amqpUrl = required('TEST_AMQP_URL');
  const runId = `${Date.now().toString(36)}${crypto.randomBytes(2).toString('hex')}`;
  const dbName = `mp_bench_${runId}`;
  const queueName = `modelplane.bench.${runId}`;
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'modelplane-bench-'));
  const logFile = (name: string) => path.join(dataDir, `${name}.log`);
  console.log(`bench: data and logs in ${dataDir}`);

  const admin = knexFactory({ client: 'pg', connection: adminUrl, pool: { min: 0, max: 1 } });
  await admin.raw(`create database ${dbName}`);
  const dbUrl = new URL(adminUrl);
  dbUrl.pathname = `/${dbName}`;
  const db = knexFactory({ client: 'pg', connection: dbUrl.toString(), pool: { min: 0, max: 2 } });

  const ports = { auth: await freePort(), private: await freePort(), public: await freePort(), executor: await freePort(), model: await freePort(), hello: await freePort() };
  const common: Record<string, string> = {
    DATABASE_URL: dbUrl.toString(),
    MODELPLANE_AMQP_URL: amqpUrl,
    MODELPLANE_QUEUE_NAME: queueName,
    MODELPLANE_DATA_DIR: dataDir,
    MODELPLANE_DEV_MODE: 'true', // the model server listens on loopback
    MODELPLANE_LOG_LEVEL: LOG_LEVEL,
    MODELPLANE_ADMIN_EMAIL: 'bench@modelplane.local',
    MODELPLANE_ADMIN_PASSWORD: PASSWORD,
    MODELPLANE_AUTH_PORT: String(ports.auth),
    MODELPLANE_PRIVATE_PORT: String(ports.private),
    MODELPLANE_PUBLIC_PORT: String(ports.public),
    MODELPLANE_EXECUTOR_PORT: String(ports.executor),
    MODELPLANE_EXECUTOR_CONCURRENCY: String(EXECUTOR_CONCURRENCY),
  };
  const children: Child[] = [];
  const start = async (name: string, nodeArgs: string[], readyUrl: string) => {
    const child = startNode(name, nodeArgs, common, logFile(name));
    children.push(child);
    await waitReady(child, readyUrl);
    return child;
  };
  const url = (port: number) => `http://127.0.0.1:${port}`;

  try {
    // Migrations, the staff user and workspace `default`, the keys under the data folder.
    await runCli(['admin', 'bootstrap'], common, logFile('bootstrap'));
    const hello = await start('hello', script('bench/hello-server.ts', [String(ports.hello)]), `${url(ports.hello)}/healthz`);
    await start('model-server', script('bench/model-server.ts', [String(ports.model), String(MODEL_DELAY_MS)]), `${url(ports.model)}/v2/health/ready`);
    await Promise.all([
      start('auth', cli(['serve', 'auth']), `${url(ports.auth)}/readyz`),
      start('private', cli(['serve', 'private']), `${url(ports.private)}/readyz`),
      start('public', cli(['serve', 'public']), `${url(ports.public)}/readyz`),
    ]);

    // (1) the floor: a bare express hello.
    console.log('bench: (1) express hello');
    await load({ url: `${url(ports.hello)}/hello`, connections: CONNECTIONS, durationSec: WARMUP_SEC });
    const baseline = await load({ url: `${url(ports.hello)}/hello`, connections: CONNECTIONS, durationSec: DURATION });
    await hello.stop();

    // (0) the floors: one database round trip, one durable broker hop.
    console.log('bench: (0) PostgreSQL and RabbitMQ floors');
    const pgFloor = await postgresRoundTrips(dbUrl.toString(), { clients: CONNECTIONS, pool: 10, durationMs: Math.min(DURATION, 5) * 1000 });
    const brokerFloor = await brokerHop(amqpUrl, `${queueName}.floor`, 100);

    // The tenant: storage, model card, deployment on the model server, the model, sessions.
    const auth = new Client(url(ports.auth));
    const priv = new Client(url(ports.private));
    const pub = new Client(url(ports.public));
    const token = (await expectOk(auth.post('/api/auth/token/obtain', { json: { email: common.MODELPLANE_ADMIN_EMAIL, password: PASSWORD, workspace: 'default' } }))).body.access as string;
    await expectOk(priv.post('/api/storage', { token, json: { storage_key: 'bench', storage_class: 'modelplane.storage.FilesystemStorage', connector_init: { path: 'bench' } } }));
    const ticket = await expectOk(priv.post('/api/storage/bench/files/request_upload', { token, json: { file_name: 'card.md', content_type: 'text/markdown' } }));
    const form = new FormData();
    form.append('file', new Blob(['# Iris'], { type: 'text/markdown' }), 'card.md');
    const card = await expectOk(priv.post(`/api/storage/bench/files/proxy_upload/${ticket.body.upload_id}`, { token, multipart: form }));
    const model = url(ports.model);
    await expectOk(
      priv.post('/api/deployment', {
        token,
        json: {
          deployment_key: 'bench',
          registry_connector_class: 'modelplane.registry.OpenInferenceRegistryConnector',
          registry_connector_init: { model_registry_url: model, tracking_server_url: model },
          server_proxy_class: 'modelplane.proxy.OpenInferenceServerProxy',
          server_proxy_init: { server_proxy_url: model },
        },
      }),
    );
    await expectOk(
      priv.post('/api/platform_model', {
        token,
        json: {
          model_code: 'iris-classifier',
          version: '1',
          name: 'Iris',
          description: 'Iris species',
          input_schema: {
            type: 'json',
            schema: {
              type: 'object',
              additionalProperties: false,
              required: ['sepal_length', 'sepal_width', 'petal_length', 'petal_width'],
              properties: Object.fromEntries(['sepal_length', 'sepal_width', 'petal_length', 'petal_width'].map((k) => [k, { type: 'number', minimum: 0 }])),
            },
          },
          output_schema: { type: 'json' },
          model_card_file_id: card.body.file_id,
        },
      }),
    );
    const base = '/api/model/iris-classifier/version/1';
    const sessions = async (n: number) => {
      const ids: string[] = [];
      for (let i = 0; i < n; i++) ids.push((await expectOk(pub.post(`${base}/session`, { token }))).body.id as string);
      return ids;
    };
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    const invokePaths = (ids: string[]) => ids.map((id) => `${base}/session/${id}/invocation`);
    const postLoad = (paths: string[], overallRate?: number, durationSec = DURATION) =>
      load({ url: url(ports.public), method: 'POST', headers, body: INVOKE, paths, connections: CONNECTIONS, durationSec, overallRate });

    // (2) POST …/invocation, executor stopped (its CPU would be the API's on this machine): saturation, then 50% of it.
    console.log('bench: (2) POST invocation');
    const loadSessions = await sessions(SESSIONS);
    await postLoad(invokePaths(loadSessions), undefined, WARMUP_SEC);
    const postSaturated = await postLoad(invokePaths(loadSessions));
    const postHalf = await postLoad(invokePaths(loadSessions), Math.max(1, Math.round(postSaturated.rps / 2)));

    const publicMemory = await memoryOf(url(ports.public));

    // (3) GET …/invocation/{id}: polling of existing invocations.
    console.log('bench: (3) GET invocation');
    const polled = (await db('invocations').whereIn('session_id', loadSessions).select('id', 'session_id').limit(2000)) as Array<{ id: string; session_id: string }>;
    const getPaths = polled.map((row) => `${base}/session/${row.session_id}/invocation/${row.id}`);
    await load({ url: url(ports.public), headers, paths: getPaths, connections: CONNECTIONS, durationSec: WARMUP_SEC });
    const getSaturated = await load({ url: url(ports.public), headers, paths: getPaths, connections: CONNECTIONS, durationSec: DURATION });

    // (5) executor throughput: it drains the backlog (2) left, against the model server's own maximum at the same concurrency.
    console.log('bench: (5) model server maximum, executor drain');
    const inferUrl = `${model}/v2/models/iris-classifier/versions/1/infer`;
    const inferBody = JSON.stringify(toInferenceRequest(IRIS));
    const direct = (options: { connections: number; overallRate?: number; durationSec?: number }) =>
      load({ url: inferUrl, method: 'POST', headers: { 'content-type': 'application/json' }, body: inferBody, durationSec: DURATION, ...options });
    await direct({ connections: EXECUTOR_CONCURRENCY, durationSec: WARMUP_SEC });
    const modelMax = await direct({ connections: EXECUTOR_CONCURRENCY });
    const backlog = Number(((await db('invocations').where({ status: 'QUEUED' }).count('* as n').first()) as { n: string }).n);
    await start('executor', cli(['executor']), `${url(ports.executor)}/readyz`);
    await until(async () => Number(((await db('invocations').whereIn('status', ['QUEUED', 'IN_PROGRESS']).count('* as n').first()) as { n: string }).n) === 0, 'the executor to drain the backlog', DRAIN_TIMEOUT_MS);
    const drain = (await db('invocations')
      .where({ status: 'COMPLETED' })
      .first(db.raw('count(*)::int as n'), db.raw('extract(epoch from max(completed_at) - min(started_at)) as seconds'))) as { n: number; seconds: string };
    const executorRate = drain.n / Number(drain.seconds);

    // (4) end-to-end latency at 50% of what the whole path sustains, against the same call made directly at the same rate.
    console.log('bench: (4) end-to-end latency');
    const e2eRate = Math.max(1, Math.round(Math.min(postSaturated.rps, executorRate) / 2));
    const e2eSessions = await sessions(SESSIONS);
    const e2eLoad = await postLoad(invokePaths(e2eSessions), e2eRate);
    await until(async () => Number(((await db('invocations').whereIn('session_id', e2eSessions).whereIn('status', ['QUEUED', 'IN_PROGRESS']).count('* as n').first()) as { n: string }).n) === 0, 'end-to-end invocations to finish', DRAIN_TIMEOUT_MS);
    const e2eRows = (await db('invocations')
      .whereIn('session_id', e2eSessions)
      .where({ status: 'COMPLETED' })
      .select(
        db.raw('extract(epoch from completed_at - created_at) * 1000 as total'),
        db.raw('extract(epoch from published_at - created_at) * 1000 as queued'),
        db.raw('extract(epoch from started_at - published_at) * 1000 as delivered'),
        db.raw('extract(epoch from completed_at - started_at) * 1000 as ran'),
      )) as Array<Record<'total' | 'queued' | 'delivered' | 'ran', string>>;
    const column = (name: 'total' | 'queued' | 'delivered' | 'ran') => e2eRows.map((row) => Number(row[name])).sort((a, b) => a - b);
    const e2eMs = column('total');
    // Where the time goes (p50 of each leg): commit → published by the relay, → claimed by the executor, → committed COMPLETED.
    const legs = Object.fromEntries((['queued', 'delivered', 'ran'] as const).map((leg) => [leg, { p50: percentile(column(leg), 50), p99: percentile(column(leg), 99) }]));
    const directHalf = await direct({ connections: CONNECTIONS, overallRate: e2eRate });

    // (6) peak RSS of every process, read before they stop.
    const rss = Object.fromEntries(children.map((child) => [child.name, child.peakRss()]));
    const loadAfter = os.loadavg();

    const report: BenchReport = {
      date: started.toISOString(),
      machine: { cpus: os.cpus().length, model: os.cpus()[0]?.model ?? '', node: process.version, loadavgBefore: loadBefore, loadavgAfter: loadAfter },
      settings: { durationSec: DURATION, connections: CONNECTIONS, modelDelayMs: MODEL_DELAY_MS, sessions: SESSIONS, executorConcurrency: EXECUTOR_CONCURRENCY, logLevel: LOG_LEVEL },
      baseline: brief(baseline),
      floors: { postgres: pgFloor, broker: brokerFloor },
      postSaturated: brief(postSaturated),
      postHalf: brief(postHalf),
      getSaturated: brief(getSaturated),
      endToEnd: { rate: e2eRate, count: e2eMs.length, p50: percentile(e2eMs, 50), p99: percentile(e2eMs, 99), legs, load: brief(e2eLoad) },
      direct: brief(directHalf),
      executor: { backlog, completed: drain.n, seconds: Number(drain.seconds), rps: executorRate },
      modelMax: brief(modelMax),
      rssBytes: rss,
      publicMemoryAfterPost: publicMemory,
    };
    const table = renderTable(report);
    console.log(`\n${table}\n`);
    const resultsDir = path.resolve(new URL('.', import.meta.url).pathname, 'results');
    fs.mkdirSync(resultsDir, { recursive: true });
    const file = path.join(resultsDir, `${started.toISOString().slice(0, 19).replace(/:/g, '-')}Z.json`);
    fs.writeFileSync(file, `${JSON.stringify({ ...report, table }, null, 2)}\n`);
    console.log(`bench: written to ${path.relative(process.cwd(), file)}`);
  } finally {
    await Promise.allSettled(children.map((child) => child.stop()));
    await db.destroy();
    await admin.raw(`drop database if exists ${dbName} with (force)`).catch(() => undefined);
    await admin.destroy();
    const connection = await amqp.connect(amqpUrl).catch(() => undefined);
    if (connection) {
      const channel = await connection.createChannel();
      await channel.deleteQueue(queueName).catch(() => undefined);
      await channel.deleteQueue(`${queueName}.dead`).catch(() => undefined);
      await connection.close().catch(() => undefined);
    }
    if (!process.env.BENCH_KEEP) fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

/** Heap figures of a server from its /metrics (where its RSS goes). */
async function memoryOf(base: string): Promise<Record<string, number>> {
  const text = await (await fetch(`${base}/metrics`)).text();
  const pick = (name: string) => Number(new RegExp(`^\\w*${name}(?:\\{[^}]*\\})? ([0-9.e+]+)$`, 'm').exec(text)?.[1] ?? NaN);
  return {
    rss: pick('process_resident_memory_bytes'),
    heapTotal: pick('nodejs_heap_size_total_bytes'),
    heapUsed: pick('nodejs_heap_size_used_bytes'),
    external: pick('nodejs_external_memory_bytes'),
  };
}

function brief(result: LoadResult) {
  return { rps: result.rps, p50: result.p50, p99: result.p99, requests: result.requests, statuses: result.statuses, errors: result.errors, timeouts: result.timeouts };
}

async function expectOk<T extends { status: number; text: string }>(reply: Promise<T>): Promise<T> {
  const r = await reply;
  if (r.status >= 300) throw new Error(`setup request failed: ${r.status} ${r.text}`);
  return r;
}

async function until(check: () => Promise<boolean>, what: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await sleep(100);
  }
  throw new Error(`bench: timed out waiting for ${what}`);
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
