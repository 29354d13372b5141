// `make bench`: every figure of one run side by side, printed as a table and
// written to bench/results/<date>.json. The platform runs as child processes
// (auth, private, public, executor) from the build, on the real PostgreSQL and
// RabbitMQ of scripts/services, in front of a real model server (MLServer with
// a scikit-learn iris classifier); the load comes from autocannon in this
// process. Nothing here is a test: no figure fails the build.
//
// Environment: TEST_DATABASE_URL, TEST_AMQP_URL and TEST_PYTHON_VENV
// (scripts/services/all.sh env postgres rabbitmq python); optional
// BENCH_MODEL_SERVER (mlserver, or demo: the demo Node server with a fixed
// BENCH_MODEL_DELAY_MS, 10), BENCH_DURATION_SEC (10), BENCH_CONNECTIONS (32),
// BENCH_SESSIONS (32), BENCH_LOG_LEVEL (info), BENCH_DATABASE (socket when
// TEST_DATABASE_SOCKET_URL is set, else tcp): how the platform reaches PostgreSQL,
// BENCH_PLACEMENT (split: the model server on the last CPU and the executor on
// the others, as separate pods would be; shared: wherever the scheduler puts them),
// BENCH_FAIR_SIZES (1,10,100: flooding workspaces of each fairness row, empty to skip it),
// BENCH_FAIR_INVOCATIONS (10000), BENCH_FAIR_QUIET_RATE (4: the quiet workspace's calls per second at most; lower
// when half its fair share of the drain at the largest flood is lower, bench/lib/fairness.ts lowRate).
// BENCH_ONLY=notifications: only (8), at BENCH_NOTIFY_RATE (100) per second, printed and not written.
// BENCH_ONLY=one-call: only (4)'s prediction in one call (`Prefer: wait`) against direct calls, at BENCH_ONE_CALL_RATE (100)
// per second; writes bench/results/one-call-<date>.json.
// BENCH_TRACING_RATE (100): POSTs per second of (9)'s CPU runs.
// BENCH_ONLY=shadow: only (10), POSTs through an alias with one shadow version against the same without, at
// BENCH_SHADOW_RATE (100) per second, in BENCH_SHADOW_ROUNDS (5) pairs; writes bench/results/shadow-<date>.json.
// BENCH_SHADOW_EXECUTOR=paused stops (10)'s executor during its POSTs: the copy's own cost, apart from running the shadows.
// The queue comparison (Q), against the baselines of bench/baselines/: BENCH_QUEUE_ROUNDS (5) interleaved pairs,
// BENCH_QUEUE_DURATION_SEC (BENCH_DURATION_SEC) per POST and GET round, BENCH_QUEUE_MODEL_MS (0,20: the demo model
// server's delay of each drain), BENCH_QUEUE_WINDOW_SEC (8) per drain round after BENCH_QUEUE_WARMUP_SEC (2),
// BENCH_QUEUE_BACKLOG (3000): a contender's first drain backlog. BENCH_ONLY=queues runs (Q) alone and writes
// bench/results/queues-<date>.json.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import knexFactory from 'knex';
import { cli, freePort, nodeOptionsOf, runCli, script, startNode, waitReady, type Child } from './lib/processes.js';
import { load, median, type Brief } from './lib/load.js';
import { cpuOfDatabaseSince, cpuOfRabbitmqSince, cpuOfServerSince, cpuSince, parentPid, postmasterOf, withCpu } from './lib/cpu.js';
import { fairnessTable, notificationsTable, renderTable, segmentsText, tracingTable, type BenchReport, type GaugesMs, type OneCallLatency, oneCallTable } from './lib/report.js';
import { brokerHop, postgresRoundTrips } from './lib/floors.js';
import { modelServerKind, startModelServer, type BenchModelServer } from './lib/model-server.js';
import { setUpTenant, setUpWorkspaceTenant, type Tenant } from './lib/tenant.js';
import { pin, placementMode, planPlacement, prioritize } from './lib/placement.js';
import { completedAt, completedBetween, databaseClockMs, latencies, queuedCount, throughput, waitFinal } from './lib/invocations.js';
import { clockOffsetOf, measureNotifications, sseProbe, webhookProbe, type NotificationsControl } from './lib/notifications.js';
import { pairedDrain, type DrainControl } from './lib/paired-drain.js';
import { pairedLatency, type LatencyControl } from './lib/paired-latency.js';
import { cpuGaugeMs } from './lib/gauge.js';
import { withSteal } from './lib/steal.js';
import { sustainedCapacity } from './lib/capacity.js';
import { deleteWorkQueue } from '../test/support/services.js';
import { tracingSection, type TracingCostReport } from './lib/tracing-cost.js';
import { drainOf, measureFairness, queueWaits, type FairnessReport, type Target } from './lib/fairness.js';
import { ANY_VERSION } from '../demo/model-server/service.js';
import { queueComparison, type QueueSectionSettings } from './lib/queue-section.js';
import { latencyTargets, queuesTable, queueTargets, rssTargets } from './lib/targets.js';
import { targetsTable } from './lib/verdict.js';
import { shadowCost, shadowTable, type ShadowCostReport } from './lib/shadow-cost.js';
import { PLAIN_ALIAS, SHADOWED_ALIAS, setUpAliases } from './lib/alias-tenant.js';

const env = (name: string, fallback: string) => process.env[name] || fallback;
const DURATION = Number(env('BENCH_DURATION_SEC', '10'));
const CONNECTIONS = Number(env('BENCH_CONNECTIONS', '32'));
const MODEL_SERVER = modelServerKind(env('BENCH_MODEL_SERVER', 'mlserver'));
const MODEL_DELAY_MS = Number(env('BENCH_MODEL_DELAY_MS', '10'));
const SESSIONS = Number(env('BENCH_SESSIONS', '32'));
const LOG_LEVEL = env('BENCH_LOG_LEVEL', 'info');
// Processes on PostgreSQL's own machine reach it over its Unix socket: loopback TCP makes each
// statement's writer run the receiving side's TCP stack too (docs/decisions.md).
const DATABASE_TRANSPORT = databaseTransport(env('BENCH_DATABASE', process.env.TEST_DATABASE_SOCKET_URL ? 'socket' : 'tcp'));
const PLACEMENT = planPlacement(placementMode(env('BENCH_PLACEMENT', 'split')), os.cpus().length);
const EXECUTOR_CONCURRENCY = 8; // the platform's default (DIDYMA_EXECUTOR_CONCURRENCY)
const WARMUP_SEC = 3;
// Bisections between a quarter of the upper bound and the bound: 3 find the sustained rate within a tenth of the bound.
const CAPACITY_BISECTIONS = 3;
const DRAIN_TIMEOUT_MS = 600_000;
// (5): segments of the drain and runs of the model server's maximum, taken in turn (bench/lib/paired-drain.ts).
const DRAIN_SEGMENT_SEC = 6;
const DRAIN_SEGMENTS = 5;
const MAX_RUN_SEC = 4;
// (4): rounds of end-to-end latency, each between two direct runs (bench/lib/paired-latency.ts).
const LATENCY_ROUNDS = 3;
// …and of a prediction in one call: a wait far above the run's latency, so only an overloaded round answers before the result.
const ONE_CALL_WAIT_SEC = 10;
// Rounds of (9): five, so that the median of each side drops two disturbed rounds.
const TRACING_ROUNDS = 5;
// …and the rate of their CPU runs: below saturation, so that neither server queues and CPU per POST is the work's own:
// half the naive enqueue's saturation when the run measured it, else this.
const TRACING_CPU_RATE = Number(env('BENCH_TRACING_RATE', '100'));
const tracingRateOf = (queues?: { enqueue: { naive: Array<{ rps: number }> } }) =>
  process.env.BENCH_TRACING_RATE || !queues ? TRACING_CPU_RATE : Math.max(1, Math.round(median(queues.enqueue.naive.map((run) => run.rps)) / 2));
const SETTLE_MS = 500;
const PASSWORD = 'Correct-Horse-Battery-42';
const FAIR_SIZES = (process.env.BENCH_FAIR_SIZES ?? '1,10,100').split(',').filter(Boolean).map(Number);
const FAIR_INVOCATIONS = Number(env('BENCH_FAIR_INVOCATIONS', '10000'));
const FAIR_QUIET_RATE = Number(env('BENCH_FAIR_QUIET_RATE', '4'));
const FAIR_QUIET_SESSIONS = 4;
// (8): the last notifications may arrive this long after the database says every invocation finished.
const NOTIFY_GRACE_MS = 10_000;
// BENCH_ONLY=notifications runs (8) alone, at BENCH_NOTIFY_RATE: no (4) gives it a rate; BENCH_ONLY=tracing runs (9) alone;
// BENCH_ONLY=fairness runs (7) alone, BENCH_ONLY=drain (5) alone after POSTs at saturation, BENCH_ONLY=get (3) alone.
const SECTIONS = ['notifications', 'tracing', 'fairness', 'drain', 'get', 'queues', 'one-call', 'shadow'] as const;
const ONLY = onlySection(env('BENCH_ONLY', ''));
const QUEUE_SETTINGS: QueueSectionSettings = {
  rounds: Number(env('BENCH_QUEUE_ROUNDS', '5')),
  durationSec: Number(env('BENCH_QUEUE_DURATION_SEC', String(DURATION))),
  warmUpSec: WARMUP_SEC,
  connections: CONNECTIONS,
  sessions: SESSIONS,
  modelDelaysMs: env('BENCH_QUEUE_MODEL_MS', '0,20').split(',').filter(Boolean).map(Number),
  drain: {
    warmUpSec: Number(env('BENCH_QUEUE_WARMUP_SEC', '2')),
    windowSec: Number(env('BENCH_QUEUE_WINDOW_SEC', '8')),
    firstBacklog: Number(env('BENCH_QUEUE_BACKLOG', '3000')),
    slack: 2 * EXECUTOR_CONCURRENCY,
    pollMs: 250,
    timeoutMs: DRAIN_TIMEOUT_MS,
  },
};
const NOTIFY_RATE = Number(env('BENCH_NOTIFY_RATE', '100'));
const ONE_CALL_RATE = Number(env('BENCH_ONE_CALL_RATE', '100'));
const SHADOW_RATE = Number(env('BENCH_SHADOW_RATE', '100'));
const SHADOW_ROUNDS = Number(env('BENCH_SHADOW_ROUNDS', '5'));
const SHADOW_EXECUTOR_PAUSED = env('BENCH_SHADOW_EXECUTOR', 'running') === 'paused';
// BENCH_KEEP=1 keeps the run's database and its processes' logs, to look into afterwards.
const KEEP = Boolean(process.env.BENCH_KEEP);

function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: run \`make bench\` (it starts PostgreSQL, RabbitMQ, Jaeger and the Python tools with scripts/services and exports their URLs).`);
  return value;
}

function onlySection(value: string): '' | (typeof SECTIONS)[number] {
  if (value === '') return value;
  const section = SECTIONS.find((name) => name === value);
  if (section) return section;
  throw new Error(`BENCH_ONLY must be ${SECTIONS.join(', ')} or unset, not ${JSON.stringify(value)}.`);
}

function databaseTransport(value: string): 'socket' | 'tcp' {
  if (value === 'socket' || value === 'tcp') return value;
  throw new Error(`BENCH_DATABASE must be socket or tcp, not ${JSON.stringify(value)}.`);
}

async function main() {
  const started = new Date();
  const loadBefore = os.loadavg();
  const adminUrl = required(DATABASE_TRANSPORT === 'socket' ? 'TEST_DATABASE_SOCKET_URL' : 'TEST_DATABASE_URL');
  const amqpUrl = required('TEST_AMQP_URL');
  const pythonVenv = MODEL_SERVER === 'mlserver' ? required('TEST_PYTHON_VENV') : undefined;
  const runId = `${Date.now().toString(36)}${crypto.randomBytes(2).toString('hex')}`;
  const dbName = `dy_bench_${runId}`;
  const queueName = `didyma.bench.${runId}`;
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'didyma-bench-'));
  const logFile = (name: string) => path.join(dataDir, `${name}.log`);
  console.log(`bench: data and logs in ${dataDir}`);

  const admin = knexFactory({ client: 'pg', connection: adminUrl, pool: { min: 0, max: 1 } });
  await admin.raw(`create database ${dbName}`);
  const dbUrl = new URL(adminUrl);
  dbUrl.pathname = `/${dbName}`;
  const db = knexFactory({ client: 'pg', connection: dbUrl.toString(), pool: { min: 0, max: 2 } });
  // The PostgreSQL server of the run, on this host: a drain's CPU is all of its processes', another server's is not.
  const postmasterPid = parentPid(((await db.raw('select pg_backend_pid() as pid')) as { rows: Array<{ pid: number }> }).rows[0]!.pid);
  const dataDirectory = ((await db.raw('show data_directory')) as { rows: Array<{ data_directory: string }> }).rows[0]!.data_directory;

  const ports = { auth: await freePort(), private: await freePort(), public: await freePort(), executor: await freePort(), model: await freePort(), hello: await freePort() };
  const common: Record<string, string> = {
    DATABASE_URL: dbUrl.toString(),
    DIDYMA_AMQP_URL: amqpUrl,
    DIDYMA_QUEUE_NAME: queueName,
    DIDYMA_DATA_DIR: dataDir,
    DIDYMA_DEV_MODE: 'true', // the model server listens on loopback
    DIDYMA_LOG_LEVEL: LOG_LEVEL,
    DIDYMA_ADMIN_EMAIL: 'bench@didyma.local',
    DIDYMA_ADMIN_PASSWORD: PASSWORD,
    DIDYMA_AUTH_PORT: String(ports.auth),
    DIDYMA_PRIVATE_PORT: String(ports.private),
    DIDYMA_PUBLIC_PORT: String(ports.public),
    DIDYMA_EXECUTOR_PORT: String(ports.executor),
    DIDYMA_EXECUTOR_CONCURRENCY: String(EXECUTOR_CONCURRENCY),
    // The drain pauses the executor (SIGSTOP) between its segments: a lease must outlast a pause.
    DIDYMA_EXECUTOR_LEASE_SECONDS: '60',
    // (7) signs the staff user in to a hundred and one workspaces in a few seconds.
    DIDYMA_LOGIN_LIMIT_PER_SOURCE: '1000',
    DIDYMA_LOGIN_LIMIT_PER_ACCOUNT: '1000',
    DIDYMA_LOGIN_LIMIT_PER_CLIENT: '1000',
    // The notification probe follows every session of one user (BENCH_SESSIONS) with a stream each.
    DIDYMA_MAX_EVENT_STREAMS_PER_USER: String(Math.max(10, SESSIONS)),
    DIDYMA_MAX_EVENT_STREAMS_PER_WORKSPACE: String(Math.max(100, SESSIONS)),
  };
  const children: Child[] = [];
  const start = async (name: string, nodeArgs: string[], readyUrl: string) => {
    const child = startNode(name, nodeArgs, common, logFile(name));
    children.push(child);
    await waitReady(child, readyUrl);
    return child;
  };
  const url = (port: number) => `http://127.0.0.1:${port}`;
  let model: BenchModelServer | undefined;
  let fairModelServer: BenchModelServer | undefined;
  let shadowModelServer: BenchModelServer | undefined;

  try {
    // Migrations, the staff user and workspace `default`, the keys under the data folder.
    await runCli(['admin', 'bootstrap'], common, logFile('bootstrap'));
    // MLServer takes a while to start (it trains the model first): the rest starts meanwhile.
    const startingModel = startModelServer(MODEL_SERVER, { pythonVenv, port: ports.model, delayMs: MODEL_DELAY_MS, env: common, logFile: logFile('model-server') });
    const startup = await Promise.allSettled([
      startingModel.then((server) => (model = server)),
      start('hello', script('bench/hello-server.ts', [String(ports.hello)]), `${url(ports.hello)}/healthz`),
      start('auth', cli(['serve', 'auth']), `${url(ports.auth)}/readyz`),
      start('private', cli(['serve', 'private']), `${url(ports.private)}/readyz`),
      start('public', cli(['serve', 'public']), `${url(ports.public)}/readyz`),
    ]);
    for (const outcome of startup) if (outcome.status === 'rejected') throw outcome.reason;
    const pidOf = (name: string) => children.find((child) => child.name === name)?.process.pid;
    // (6) peak RSS of every process (the last child of each name holds the peak of all of that name's).
    const rssOf = () => ({ ...model!.peakRss(), ...Object.fromEntries(children.map((child) => [child.name, child.peakRss()])) });
    const modelServer = model!;
    pin(modelServer.pid, PLACEMENT.modelCpus);
    prioritize(modelServer.pid, PLACEMENT.modelNice);
    // The VM's speed before each figure, with nothing of the run busy (bench/lib/gauge.ts).
    const gauges: GaugesMs = { start: cpuGaugeMs() };
    console.log(`bench: model server ${modelServer.label} on ${modelServer.url}`);

    // (1) the baseline, a bare express hello: measured again just before each figure it is the denominator of.
    const hello = async (before: string) => {
      console.log(`bench: (1) express hello, before ${before}`);
      await load({ url: `${url(ports.hello)}/hello`, connections: CONNECTIONS, durationSec: WARMUP_SEC });
      return withCpu(pidOf('hello'), () => load({ url: `${url(ports.hello)}/hello`, connections: CONNECTIONS, durationSec: DURATION }));
    };

    // The tenant: storage, model card, deployment on the model server, the model.
    const tenant = await setUpTenant({ auth: url(ports.auth), private: url(ports.private), public: url(ports.public) }, { email: common.DIDYMA_ADMIN_EMAIL!, password: PASSWORD }, modelServer);
    const { base, headers } = tenant;
    // Bench setup: the staff user joins each workspace it creates, to sign in to it.
    const adminId = ((await db('users').where({ email: common.DIDYMA_ADMIN_EMAIL }).first('id')) as { id: number }).id;
    const staff = { headers, join: async (workspaceId: number) => void (await db('memberships').insert({ user_id: adminId, workspace_id: workspaceId, role: 'supervisor' })) };
    const invokeBody = JSON.stringify({ type: 'PREDICT', request: { type: 'FEATURES', body: modelServer.body } });
    const invokePaths = (ids: string[]) => ids.map((id) => `${base}/session/${id}/invocation`);
    const postLoad = (sessionIds: string[], overallRate?: number, durationSec = DURATION, extraHeaders: Record<string, string> = {}) =>
      load({ url: url(ports.public), method: 'POST', headers: { ...headers, ...extraHeaders }, body: invokeBody, paths: invokePaths(sessionIds), connections: CONNECTIONS, durationSec, overallRate });
    const direct = (options: { connections: number; overallRate?: number; durationSec?: number }) =>
      load({ url: modelServer.inferUrl, method: 'POST', headers: { 'content-type': 'application/json' }, body: modelServer.inferBody, durationSec: DURATION, ...options });
    const notificationsControl: NotificationsControl = {
      sessions: (n) => tenant.sessions(n),
      clockOffset: () => clockOffsetOf(() => databaseClockMs(db)),
      openProbes: async (sessionIds) => ({
        sse: await sseProbe(url(ports.public), sessionIds.map((id) => `${base}/session/${id}/events`), headers),
        webhook: await webhookProbe((receiverUrl) => registerWebhook(url(ports.private), headers, receiverUrl)),
      }),
      post: (sessionIds, rate) => postLoad(sessionIds, rate),
      waitFinal: (sessionIds) => waitFinal(db, sessionIds, 'the invocations of (8) to finish', DRAIN_TIMEOUT_MS),
      completedAt: (sessionIds) => completedAt(db, sessionIds),
    };
    // Each round's POSTs carry `Prefer: wait`; the rounds are set between direct calls at the same rate (bench/lib/paired-latency.ts).
    const oneCallAt = async (rate: number): Promise<OneCallLatency> => {
      const loads: Brief[] = [];
      const paired = await pairedLatency(
        {
          direct: () => direct({ connections: CONNECTIONS, overallRate: rate }),
          endToEnd: async () => {
            const run = await postLoad(await tenant.sessions(SESSIONS), rate, DURATION, { prefer: `wait=${ONE_CALL_WAIT_SEC}` });
            loads.push(run);
            return { count: run.requests, p50: run.p50, p99: run.p99 };
          },
        },
        LATENCY_ROUNDS,
      );
      return { rate, waitSec: ONE_CALL_WAIT_SEC, loads, ...paired };
    };
    const tracingCostOfPost = async (rate: number): Promise<TracingCostReport> => {
      const sessions = await tenant.sessions(SESSIONS);
      const report = await tracingSection(
        {
          untraced: { url: url(ports.public), pid: pidOf('public')! },
          startServer: async (name, extra) => {
            const port = await freePort();
            const child = startNode(name, cli(['serve', 'public']), { ...common, ...extra, DIDYMA_PUBLIC_PORT: String(port) }, logFile(name));
            await waitReady(child, `${url(port)}/readyz`);
            return { url: url(port), pid: child.process.pid!, stop: () => child.stop() };
          },
          post: (at, durationSec, overallRate) => load({ url: at, method: 'POST', headers, body: invokeBody, paths: invokePaths(sessions), connections: CONNECTIONS, durationSec, overallRate }),
          cpuSince,
          databaseCpuSince: () => cpuOfDatabaseSince(dbName),
        },
        { rounds: TRACING_ROUNDS, rate, durationSec: DURATION, warmupSec: WARMUP_SEC },
      );
      // Out of (5)'s way: the executor drains (2)'s backlog alone.
      await db('invocations').whereIn('session_id', sessions).delete();
      return report;
    };
    const notificationsAt = (rate: number, rateFrom: string) => measureNotifications(notificationsControl, { rate, rateFrom, sessions: SESSIONS, durationSec: DURATION, graceMs: NOTIFY_GRACE_MS });

    // (7) fairness: workspaces flood the executor (its process `executorPid`) while a quiet one sends.
    const fairnessSection = async (executorPid: number): Promise<FairnessReport> => {
      const fairModel = await startModelServer('demo', { port: await freePort(), delayMs: MODEL_DELAY_MS, version: ANY_VERSION, env: common, logFile: logFile('fair-model-server') });
      fairModelServer = fairModel;
      pin(fairModel.pid, PLACEMENT.modelCpus);
      console.log('bench: (7) fairness: setting up workspaces');
      const urls = { auth: url(ports.auth), private: url(ports.private), public: url(ports.public) };
      const admin = { email: common.DIDYMA_ADMIN_EMAIL!, password: PASSWORD };
      const workspaceTenant = (name: string) => setUpWorkspaceTenant(urls, admin, staff, fairModel, name);
      const quietTenant = await workspaceTenant('fair-quiet');
      const floodTenants: Tenant[] = [];
      for (let i = 0; i < Math.max(...FAIR_SIZES); i += 10) {
        const names = Array.from({ length: Math.min(10, Math.max(...FAIR_SIZES) - i) }, (_, j) => `fair-${i + j + 1}`);
        floodTenants.push(...(await Promise.all(names.map(workspaceTenant))));
      }
      const targetsOf = async (of: Tenant, n: number): Promise<Target[]> =>
        (await of.sessions(n)).map((sessionId) => ({ sessionId, path: `${of.base}/session/${sessionId}/invocation`, headers: of.headers }));
      // Its own input: the fixed-latency server's schema, not the main model server's.
      const fairBody = JSON.stringify({ type: 'PREDICT', request: { type: 'FEATURES', body: fairModel.body } });
      const baseline = await hello('(7)');
      return measureFairness(
        {
          pause: () => process.kill(executorPid, 'SIGSTOP'),
          resume: () => process.kill(executorPid, 'SIGCONT'),
          floodTargets: async (n) => {
            const perWorkspace = Math.max(1, Math.ceil(SESSIONS / n));
            return (await Promise.all(floodTenants.slice(0, n).map((of) => targetsOf(of, perWorkspace)))).flat();
          },
          quietTargets: () => targetsOf(quietTenant, FAIR_QUIET_SESSIONS),
          flood: (targets, amount) =>
            load({ url: url(ports.public), method: 'POST', body: fairBody, requests: targets, connections: CONNECTIONS, durationSec: DRAIN_TIMEOUT_MS / 1000, amount }),
          quiet: (targets, seconds, rate) =>
            load({ url: url(ports.public), method: 'POST', headers: quietTenant.headers, body: fairBody, paths: targets.map((target) => target.path), connections: FAIR_QUIET_SESSIONS, durationSec: seconds, overallRate: rate }),
          waitFinal: (sessionIds, what) => waitFinal(db, sessionIds, what, DRAIN_TIMEOUT_MS),
          waits: (sessionIds) => queueWaits(db, sessionIds),
          drain: (flood, others) => drainOf(db, flood, others),
          cpuMeter: () => {
            const executor = cpuSince([executorPid]);
            const database = cpuOfServerSince(postmasterPid);
            return () => ({ executor: executor()[0]!, database: database() });
          },
          log: (message) => console.log(`bench: (7) ${message}`),
        },
        { sizes: FAIR_SIZES, invocations: FAIR_INVOCATIONS, quietRate: FAIR_QUIET_RATE, modelMs: MODEL_DELAY_MS, modelLabel: fairModel.label, baseline },
      );
    };

    // (10) what one shadow version costs a POST and its primary, with the executor running, at `rate`: a model
    // server of its own that answers any version, since the shadow is a second version (bench/lib/shadow-cost.ts).
    const shadowSection = async (rate: number, executorPid: number): Promise<{ report: ShadowCostReport; modelLabel: string }> => {
      const shadowModel = await startModelServer('demo', { port: await freePort(), delayMs: MODEL_DELAY_MS, version: ANY_VERSION, env: common, logFile: logFile('shadow-model-server') });
      shadowModelServer = shadowModel;
      pin(shadowModel.pid, PLACEMENT.modelCpus);
      const urls = { auth: url(ports.auth), private: url(ports.private), public: url(ports.public) };
      const shadowTenant = await setUpWorkspaceTenant(urls, { email: common.DIDYMA_ADMIN_EMAIL!, password: PASSWORD }, staff, shadowModel, 'shadow');
      const aliases = await setUpAliases(urls, shadowTenant, shadowModel, 'shadow', 'shadow-2');
      const body = JSON.stringify({ type: 'PREDICT', request: { type: 'FEATURES', body: shadowModel.body } });
      const post = (sessionIds: string[], durationSec: number) =>
        load({ url: url(ports.public), method: 'POST', headers: aliases.headers, body, paths: sessionIds.map(aliases.invocationPath), connections: CONNECTIONS, durationSec, overallRate: rate });
      const shadowSessionsOf = async (sessionIds: string[]) => ((await db('sessions').whereIn('shadow_of', sessionIds).pluck('id')) as string[]);
      for (const alias of [PLAIN_ALIAS, SHADOWED_ALIAS] as const) {
        const sessions = await aliases.sessions(alias, SESSIONS);
        await post(sessions, WARMUP_SEC);
        await waitFinal(db, [...sessions, ...(await shadowSessionsOf(sessions))], `(10)'s warm-up on ${alias}`, DRAIN_TIMEOUT_MS);
      }
      const report = await shadowCost(
        {
          round: async (shadowed) => {
            const sessions = await aliases.sessions(shadowed ? SHADOWED_ALIAS : PLAIN_ALIAS, SESSIONS);
            const processes = cpuSince([pidOf('public'), executorPid, shadowModel.pid]);
            const postgres = cpuOfServerSince(postmasterPid);
            const rabbitmq = cpuOfRabbitmqSince();
            if (SHADOW_EXECUTOR_PAUSED) process.kill(executorPid, 'SIGSTOP');
            const posted = await post(sessions, DURATION).finally(() => SHADOW_EXECUTOR_PAUSED && process.kill(executorPid, 'SIGCONT'));
            const shadowSessions = await shadowSessionsOf(sessions);
            // Every shadow finishes too, so that none runs into the next round.
            await waitFinal(db, [...sessions, ...shadowSessions], `(10)'s invocations to finish`, DRAIN_TIMEOUT_MS);
            const [publicCpu, executorCpu, modelCpu] = processes();
            const perPrimary = (seconds: number) => (seconds * 1000) / Math.max(1, posted.requests);
            const cpuMsPerPrimary = { public: perPrimary(publicCpu!), executor: perPrimary(executorCpu!), modelServer: perPrimary(modelCpu!), postgres: perPrimary(postgres()), rabbitmq: perPrimary(rabbitmq()) };
            const primaries = await latencies(db, sessions);
            const shadows = shadowSessions.length ? await db('invocations').whereIn('session_id', shadowSessions).count('* as n').first() : undefined;
            console.log(`bench: (10) ${shadowed ? 'one shadow' : 'no shadow'}: POST p50 ${posted.p50} ms, queued p50 ${primaries.legs.queued!.p50.toFixed(1)} ms`);
            return { post: posted, queued: primaries.legs.queued!, total: { p50: primaries.p50, p99: primaries.p99 }, completed: primaries.count, shadows: Number(shadows?.n ?? 0), cpuMsPerPrimary };
          },
        },
        SHADOW_ROUNDS,
        rate,
      );
      return { report, modelLabel: shadowModel.label };
    };

    // (5): a new executor drains the backlog of `loadSessions`, paired with the model server's maximum.
    const drainSection = async (loadSessions: string[]) => {
      console.log('bench: (5) executor drain, paired with the model server maximum');
      await direct({ connections: EXECUTOR_CONCURRENCY, durationSec: WARMUP_SEC });
      const backlog = await queuedCount(db, loadSessions);
      gauges.executor = cpuGaugeMs();
      const executorProcess = await start('executor', cli(['executor']), `${url(ports.executor)}/readyz`);
      const executorPid = executorProcess.process.pid!;
      pin(executorPid, PLACEMENT.executorCpus);
      const drainControl: DrainControl = {
        pause: () => process.kill(executorPid, 'SIGSTOP'),
        resume: () => process.kill(executorPid, 'SIGCONT'),
        measureMax: () => withCpu(modelServer.pid, () => direct({ connections: EXECUTOR_CONCURRENCY, durationSec: MAX_RUN_SEC })),
        completedBetween: (from, to) => completedBetween(db, loadSessions, from, to),
        queued: () => queuedCount(db, loadSessions),
        cpuSince: () => cpuSince([executorPid, modelServer.pid]) as () => [number, number],
      };
      // The executor starts cold: as every other load here, it is measured after a warm-up.
      const drainOptions = { warmUpSec: WARMUP_SEC, segmentSec: DRAIN_SEGMENT_SEC, maxSegments: DRAIN_SEGMENTS, settleMs: SETTLE_MS };
      const [paired, stolenDrain] = await withSteal(() => pairedDrain(drainControl, drainOptions));
      await waitFinal(db, loadSessions, 'the executor to drain the backlog', DRAIN_TIMEOUT_MS);
      const drained = await throughput(db, loadSessions, 'started_at');
      return { backlog, executorPid, paired, stolenDrain, drained };
    };

    // (3) GET …/invocation/{id}: polling of existing invocations, those of `loadSessions`.
    const getSection = async (loadSessions: string[]) => {
      console.log('bench: (3) GET invocation');
      const polled = (await db('invocations').whereIn('session_id', loadSessions).select('id', 'session_id').limit(2000)) as Array<{ id: string; session_id: string }>;
      const getLoad = (durationSec: number) =>
        load({ url: url(ports.public), headers, paths: polled.map((row) => `${base}/session/${row.session_id}/invocation/${row.id}`), connections: CONNECTIONS, durationSec });
      await getLoad(WARMUP_SEC);
      gauges.get = cpuGaugeMs();
      const baselineForGet = await hello('(3)');
      const [getSaturated, stolenGet] = await withSteal(() => withCpu(pidOf('public'), () => getLoad(DURATION)));
      return { baselineForGet, getSaturated, stolenGet };
    };

    // (Q) the queue comparison: didyma against the baselines of bench/baselines/, in interleaved rounds (bench/lib/queues.ts).
    const queuesSection = () =>
      queueComparison(
        {
          db,
          postmaster: () => {
            const now = postmasterOf(dataDirectory);
            return Number.isFinite(now) ? now : postmasterPid;
          },
          start,
          startExecutor: async () => {
            const executor = await start('executor', cli(['executor']), `${url(ports.executor)}/readyz`);
            pin(executor.process.pid!, PLACEMENT.executorCpus);
            return executor;
          },
          freePort,
          publicUrl: url(ports.public),
          publicPid: pidOf('public'),
          tenant,
          drainTenant: (model, name) => setUpWorkspaceTenant({ auth: url(ports.auth), private: url(ports.private), public: url(ports.public) }, { email: common.DIDYMA_ADMIN_EMAIL!, password: PASSWORD }, staff, model, name),
          invokeBody,
          modelServerEnv: common,
          modelServerVersion: ANY_VERSION,
          logFile,
          queuePrefix: queueName,
          log: (message) => console.log(`bench: ${message}`),
        },
        QUEUE_SETTINGS,
      );

    if (ONLY === 'queues') {
      console.log('bench: only (Q) the queue comparison');
      const queues = await queuesSection();
      const targets = [...queueTargets(queues), ...rssTargets(rssOf(), PLATFORM_PROCESSES)];
      const table = `${queuesTable(queues)}\n\n${targetsTable(targets)}`;
      console.log(`\n${table}\n`);
      writeResults(`queues-${resultsStamp(started)}`, { date: started.toISOString(), settings: QUEUE_SETTINGS, queues, targets, table });
      return;
    }
    if (ONLY === 'drain') {
      console.log('bench: only (5) executor drain, of the backlog of POSTs at saturation');
      const sessions = await tenant.sessions(SESSIONS);
      await postLoad(sessions);
      const { backlog, paired } = await drainSection(sessions);
      const segments = segmentsText({ segments: paired.segments, warmUpSec: WARMUP_SEC } as BenchReport['executor']);
      console.log(`\n(5) ${backlog} queued: ${Math.round(paired.rps)}/s, ${Math.round(paired.ratio * 100)}% of the model server${segments}; executor ${Math.round(paired.cpuUsPerInvocation ?? 0)} µs per invocation\n`);
      return;
    }
    if (ONLY === 'get') {
      console.log('bench: only (3) GET invocation, of POSTs at saturation');
      const sessions = await tenant.sessions(SESSIONS);
      await postLoad(sessions, undefined, WARMUP_SEC);
      const { baselineForGet, getSaturated } = await getSection(sessions);
      const cpu = (brief: Brief) => (brief.cpuUsPerRequest === undefined ? '' : `, ${Math.round(brief.cpuUsPerRequest)} µs CPU per request`);
      console.log(`\n(3) ${Math.round(getSaturated.rps)}/s${cpu(getSaturated)}, ${Math.round((getSaturated.rps / baselineForGet.rps) * 100)}% of hello's ${Math.round(baselineForGet.rps)}/s${cpu(baselineForGet)}\n`);
      return;
    }
    if (ONLY === 'tracing') {
      await load({ url: url(ports.public), method: 'POST', headers, body: invokeBody, paths: invokePaths(await tenant.sessions(SESSIONS)), connections: CONNECTIONS, durationSec: WARMUP_SEC });
      console.log(`\n${tracingTable(await tracingCostOfPost(tracingRateOf()))}\n`);
      return;
    }
    if (ONLY === 'fairness') {
      console.log('bench: only (7) fairness');
      const executorPid = (await start('executor', cli(['executor']), `${url(ports.executor)}/readyz`)).process.pid!;
      pin(executorPid, PLACEMENT.executorCpus);
      console.log(`\n${fairnessTable(await fairnessSection(executorPid))}\n`);
      return;
    }
    if (ONLY === 'one-call') {
      console.log(`bench: only (4) a prediction in one call, at ${ONE_CALL_RATE}/s`);
      pin((await start('executor', cli(['executor']), `${url(ports.executor)}/readyz`)).process.pid!, PLACEMENT.executorCpus);
      const oneCall = await oneCallAt(ONE_CALL_RATE);
      const table = oneCallTable(oneCall, modelServer.label);
      console.log(`\n${table}\n`);
      writeResults(`one-call-${resultsStamp(started)}`, { date: started.toISOString(), modelServer: modelServer.label, oneCall, table });
      return;
    }
    if (ONLY === 'shadow') {
      console.log(`bench: only (10) POSTs through an alias with one shadow, at ${SHADOW_RATE}/s`);
      const executorPid = (await start('executor', cli(['executor']), `${url(ports.executor)}/readyz`)).process.pid!;
      pin(executorPid, PLACEMENT.executorCpus);
      const { report: shadow, modelLabel } = await shadowSection(SHADOW_RATE, executorPid);
      const table = `${shadowTable(shadow, modelLabel)}\n\n${targetsTable(shadow.targets)}`;
      console.log(`\n${table}\n`);
      writeResults(`shadow-${resultsStamp(started)}`, { date: started.toISOString(), settings: { rate: SHADOW_RATE, rounds: SHADOW_ROUNDS, executor: SHADOW_EXECUTOR_PAUSED ? 'paused during the POSTs' : 'running', durationSec: DURATION, connections: CONNECTIONS, sessions: SESSIONS, modelServer: modelLabel }, shadow, table });
      return;
    }
    if (ONLY === 'notifications') {
      console.log(`bench: only (8) notifications, at ${NOTIFY_RATE}/s`);
      pin((await start('executor', cli(['executor']), `${url(ports.executor)}/readyz`)).process.pid!, PLACEMENT.executorCpus);
      console.log(`\n${notificationsTable(await notificationsAt(NOTIFY_RATE, 'BENCH_NOTIFY_RATE'))}\n`);
      return;
    }

    const queues = await queuesSection();

    // (0) the floors: one database round trip, one durable broker hop.
    console.log('bench: (0) PostgreSQL and RabbitMQ floors');
    const pgFloor = await postgresRoundTrips(dbUrl.toString(), { clients: CONNECTIONS, pool: 10, durationMs: Math.min(DURATION, 5) * 1000 });
    const brokerFloor = await brokerHop(amqpUrl, `${queueName}.floor`, 100);

    // (2) POST …/invocation, executor stopped (its CPU would be the API's on this machine): saturation, then 50% of it.
    console.log('bench: (2) POST invocation');
    const loadSessions = await tenant.sessions(SESSIONS);
    await postLoad(loadSessions, undefined, WARMUP_SEC);
    gauges.post = cpuGaugeMs();
    const baselineForPost = await hello('(2)');
    const [postSaturated, stolenPost] = await withSteal(() => withCpu(pidOf('public'), () => postLoad(loadSessions)));
    const postHalf = await postLoad(loadSessions, Math.max(1, Math.round(postSaturated.rps / 2)));

    const publicMemory = await memoryOf(url(ports.public));

    const { baselineForGet, getSaturated, stolenGet } = await getSection(loadSessions);

    // (9) what tracing costs, before the executor runs: two more public servers, one sampling as the chart ships, one recording everything.
    console.log('bench: (9) POST invocation, traced against untraced');
    const tracing = await tracingCostOfPost(tracingRateOf(queues));

    // (5) executor throughput: it drains the backlog (2) left, in segments, each set against the model server's
    // own maximum at the same concurrency measured just before and just after it (bench/lib/paired-drain.ts).
    const { backlog, executorPid, paired, stolenDrain, drained } = await drainSection(loadSessions);

    // (4) what the whole path sustains. POST at saturation, then the drain, gives an upper bound (the
    // drain has the machine to itself); the sustained rate is found below it with POST and execution
    // sharing the machine at an even rate (bench/lib/capacity.ts).
    console.log('bench: (4) end-to-end capacity');
    const saturationSessions = await tenant.sessions(SESSIONS);
    const e2eSaturationLoad = await postLoad(saturationSessions);
    await waitFinal(db, saturationSessions, 'end-to-end saturation invocations to finish', DRAIN_TIMEOUT_MS);
    const e2eCapacity = await throughput(db, saturationSessions, 'created_at');
    const sustained = await sustainedCapacity(e2eCapacity.rps, CAPACITY_BISECTIONS, async (rate) => {
      const sessions = await tenant.sessions(SESSIONS);
      const load = await postLoad(sessions, rate);
      await waitFinal(db, sessions, `the invocations at ${rate}/s to finish`, DRAIN_TIMEOUT_MS);
      const completed = await throughput(db, sessions, 'created_at');
      console.log(`bench: (4) at ${rate}/s, ${Math.round(completed.rps)}/s completed`);
      return { load, throughput: completed };
    });

    // (4) latency at 50% of that, in rounds set against direct calls to the model server at the same rate with
    // the same input, taken in turns (bench/lib/paired-latency.ts).
    console.log('bench: (4) end-to-end latency, paired with direct calls');
    const e2eRate = Math.max(1, Math.round(sustained.rate / 2));
    gauges.endToEnd = cpuGaugeMs();
    const e2eSessions: string[] = [];
    const e2eLoads: Brief[] = [];
    const latencyControl: LatencyControl = {
      direct: () => direct({ connections: CONNECTIONS, overallRate: e2eRate }),
      endToEnd: async () => {
        const sessions = await tenant.sessions(SESSIONS);
        e2eSessions.push(...sessions);
        e2eLoads.push(await postLoad(sessions, e2eRate));
        await waitFinal(db, sessions, 'end-to-end invocations to finish', DRAIN_TIMEOUT_MS);
        return latencies(db, sessions);
      },
    };
    const [pairedE2e, stolenE2e] = await withSteal(() => pairedLatency(latencyControl, LATENCY_ROUNDS));
    const e2e = await latencies(db, e2eSessions);

    // (4) the same rate with `Prefer: wait`: a prediction answered in the POST, timed by the client, against direct calls.
    console.log('bench: (4) a prediction in one call, paired with direct calls');
    const oneCall = await oneCallAt(e2eRate);
    gauges.end = cpuGaugeMs();

    // (6) peak RSS of every process, read before they stop.
    const rss = rssOf();

    // (8) how soon a client is told of a completion, at (4)'s rate; after (6), so that its streams do not count in the peaks.
    console.log('bench: (8) notifications of completion');
    const notifications = await notificationsAt(e2eRate, '50% of the sustained capacity');

    // (10) one shadow's cost at (4)'s rate, after (6) so that its model server and workspace do not count in the peaks.
    console.log('bench: (10) POSTs through an alias with one shadow');
    const shadow = await shadowSection(e2eRate, executorPid);

    // (7) fairness, after (6) so that its workspaces do not count in the peaks.
    const fairness = FAIR_SIZES.length ? await fairnessSection(executorPid) : undefined;
    const loadAfter = os.loadavg();

    const report: BenchReport = {
      date: started.toISOString(),
      machine: {
        cpus: os.cpus().length,
        model: os.cpus()[0]?.model ?? '',
        node: process.version,
        loadavgBefore: loadBefore,
        loadavgAfter: loadAfter,
        steal: { post: stolenPost, get: stolenGet, endToEnd: stolenE2e, executor: stolenDrain },
        gaugeMs: gauges,
      },
      settings: {
        durationSec: DURATION,
        connections: CONNECTIONS,
        modelServer: modelServer.kind,
        modelServerLabel: modelServer.label,
        modelDelayMs: modelServer.kind === 'demo' ? MODEL_DELAY_MS : null,
        sessions: SESSIONS,
        executorConcurrency: EXECUTOR_CONCURRENCY,
        logLevel: LOG_LEVEL,
        databaseTransport: DATABASE_TRANSPORT,
        placement: PLACEMENT,
        serverNodeOptions: nodeOptionsOf(cli(['serve', 'public'])).join(' '),
      },
      floors: { postgres: pgFloor, broker: brokerFloor },
      baselineForPost: baselineForPost,
      postSaturated: postSaturated,
      postHalf: postHalf,
      baselineForGet: baselineForGet,
      getSaturated: getSaturated,
      endToEndSaturation: { ...e2eCapacity, load: e2eSaturationLoad },
      endToEndSustained: sustained,
      endToEnd: { rate: e2eRate, ...e2e, loads: e2eLoads, pairs: pairedE2e.pairs, over: pairedE2e.over },
      directRuns: pairedE2e.directs,
      oneCall,
      executor: {
        backlog,
        completed: drained.completed,
        failed: drained.failed,
        ...(drained.errors ? { errors: drained.errors } : {}),
        rps: paired.rps,
        ratio: paired.ratio,
        warmUpSec: WARMUP_SEC,
        segments: paired.segments,
        cpuUsPerInvocation: paired.cpuUsPerInvocation,
        modelCpuUsPerCall: paired.modelCpuUsPerCall,
      },
      modelMax: paired.modelMax,
      modelMaxRuns: paired.maxima.map((run) => run.rps),
      rssBytes: rss,
      publicMemoryAfterPost: publicMemory,
      notifications,
      tracing,
      ...(fairness ? { fairness } : {}),
    };
    const targets = [...queueTargets(queues), ...latencyTargets(pairedE2e.pairs, report.floors), ...Object.values(tracing.targets), ...rssTargets(rss, PLATFORM_PROCESSES), ...shadow.report.targets];
    const table = `${renderTable(report)}\n\n${queuesTable(queues)}\n\n${shadowTable(shadow.report, shadow.modelLabel)}\n\n${targetsTable(targets)}`;
    console.log(`\n${table}\n`);
    writeResults(resultsStamp(started), { ...report, queues, shadow: shadow.report, targets, table });
  } finally {
    await Promise.allSettled([...children.map((child) => child.stop()), model?.close(), fairModelServer?.close(), shadowModelServer?.close()]);
    await db.destroy();
    if (KEEP) console.log(`bench: kept the database ${dbName} and ${dataDir}`);
    else await admin.raw(`drop database if exists ${dbName} with (force)`).catch(() => undefined);
    await admin.destroy();
    await deleteWorkQueue(amqpUrl, queueName);
    await deleteWorkQueue(amqpUrl, `${queueName}.naive`); // the naive enqueue's, of (Q)
    if (!KEEP) fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

const PLATFORM_PROCESSES = ['auth', 'private', 'public', 'executor'];
const resultsStamp = (date: Date) => `${date.toISOString().slice(0, 19).replace(/:/g, '-')}Z`;

/** Writes `content` to bench/results/<name>.json. */
function writeResults(name: string, content: object): void {
  const resultsDir = path.resolve(new URL('.', import.meta.url).pathname, 'results');
  fs.mkdirSync(resultsDir, { recursive: true });
  const file = path.join(resultsDir, `${name}.json`);
  fs.writeFileSync(file, `${JSON.stringify(content, null, 2)}\n`);
  console.log(`bench: written to ${path.relative(process.cwd(), file)}`);
}

/** A webhook endpoint of the bench's workspace for `invocation.completed`, and how to delete it. */
async function registerWebhook(privateUrl: string, headers: Record<string, string>, receiverUrl: string): Promise<() => Promise<void>> {
  const created = await fetch(`${privateUrl}/api/webhook`, { method: 'POST', headers, body: JSON.stringify({ url: receiverUrl, events: ['invocation.completed'] }) });
  if (created.status !== 201) throw new Error(`registering the webhook receiver: ${created.status} ${await created.text()}`);
  const { id } = (await created.json()) as { id: number };
  return async () => {
    await fetch(`${privateUrl}/api/webhook/${id}`, { method: 'DELETE', headers });
  };
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

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
