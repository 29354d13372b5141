// `make bench-scale-out` (`npm run bench:scale-out`): does the drain grow with
// executor processes, and what bounds it when it stops growing. For each count
// of BENCH_SCALE_OUT_COUNTS (1,2,4,8), BENCH_SCALE_OUT_QUEUED (20000)
// invocations are POSTed with no executor running, spread over four
// workspaces so that the fair claim has work to spread, then that many
// `didyma executor` processes start (as the chart runs them) and drain it,
// against the demo model server with BENCH_SCALE_OUT_MODEL_MS (20) per call
// and room for every call at once. Every figure comes from the database (the
// invocations' and attempts' timestamps, pg_stat_activity) and /proc (CPU of
// each process group), none from the executors or the broker: the drain in its
// steady part, claims per second, CPU per invocation of PostgreSQL, the
// executors and the model server, the connections in use, and what bounded it
// (bench/lib/scale-out.ts). Writes bench/results/scale-out-<date>.json.
//
// Environment: TEST_DATABASE_URL (or TEST_DATABASE_SOCKET_URL, used when set)
// and TEST_AMQP_URL (scripts/services/all.sh env postgres rabbitmq); optional
// BENCH_SCALE_OUT_POOL_MAX: the executors' DATABASE_POOL_MAX (the chart's
// externalDatabase.poolMax when unset).
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import knexFactory, { type Knex } from 'knex';
import YAML from 'yaml';
import { cli, freePort, runCli, startNode, waitReady, type Child } from './lib/processes.js';
import { cpuOfCommandSince, cpuOfDatabaseSince, cpuOfServerSince, cpuSince, parentPid } from './lib/cpu.js';
import { busySince } from './lib/steal.js';
import { load } from './lib/load.js';
import { startModelServer, type BenchModelServer } from './lib/model-server.js';
import { setUpTenant, workspaceTenant } from './lib/tenant.js';
import { completedAt, databaseClockMs, throughput, waitFinal } from './lib/invocations.js';
import {
  boundOf,
  connectionFigures,
  cpuFigures,
  deltaOver,
  kneeOf,
  projectTo,
  scaleOutTable,
  steadyWindow,
  type Connections,
  type CpuGroup,
  type Fleet,
  type Sample,
  type ScaleOutReport,
  type ScaleOutRow,
} from './lib/scale-out.js';
import { deleteWorkQueue } from '../test/support/services.js';
import { ANY_VERSION } from '../demo/model-server/service.js';

const env = (name: string, fallback: string) => process.env[name] || fallback;
const COUNTS = env('BENCH_SCALE_OUT_COUNTS', '1,2,4,8').split(',').map(Number);
const QUEUED = Number(env('BENCH_SCALE_OUT_QUEUED', '20000'));
const MODEL_MS = Number(env('BENCH_SCALE_OUT_MODEL_MS', '20'));
// Executors run as the chart runs them: its concurrency and its database pool, unless BENCH_SCALE_OUT_POOL_MAX sets theirs.
const CHART = YAML.parse(fs.readFileSync('charts/didyma/values.yaml', 'utf8')) as { executor: { concurrency: number }; externalDatabase: { poolMax: number } };
const POOL_MAX = Number(env('BENCH_SCALE_OUT_POOL_MAX', String(CHART.externalDatabase.poolMax)));
const WORKSPACES = 4;
const SESSIONS_PER_WORKSPACE = 4;
const POST_CONNECTIONS = 32;
const SAMPLE_MS = 500;
const DRAIN_TIMEOUT_MS = 1_800_000;
// The fleet docs/benchmarks.md sizes PostgreSQL for: 100 executors on 20 nodes at 10,000 invocations a second.
const FLEET_EXECUTORS = 100;
const FLEET_RATE = 10_000;
const PASSWORD = 'Correct-Horse-Battery-42';
const ADMIN = { email: 'bench@didyma.local', password: PASSWORD };

function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: run \`make bench-scale-out\` (it starts PostgreSQL and RabbitMQ with scripts/services and exports their URLs).`);
  return value;
}

/** The executors' connections carry this application_name (libpq's PGAPPNAME, which pg reads). */
const EXECUTOR_APP = 'didyma-bench-executor';

/** The run's connections now (the bench's own left out), and the database's clock: the time of every sample. */
async function connectionsNow(db: Knex): Promise<Connections & { at: number }> {
  const { rows } = (await db.raw(
    `select extract(epoch from clock_timestamp()) * 1000 as at, count(*)::int as total,
            count(*) filter (where application_name = ?)::int as executors,
            count(*) filter (where application_name = ? and state in ('active', 'idle in transaction'))::int as executors_active
       from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()`,
    [EXECUTOR_APP, EXECUTOR_APP],
  )) as { rows: Array<{ at: string; total: number; executors: number; executors_active: number }> };
  const row = rows[0]!;
  return { at: Number(row.at), total: row.total, executors: row.executors, executorsActive: row.executors_active };
}

/** Reads the connections and the CPU counters every SAMPLE_MS until stopped. */
function startSampler(db: Knex, counters: () => Record<CpuGroup, number>) {
  const samples: Array<Sample<CpuGroup>> = [];
  const readings: Connections[] = [];
  let running = true;
  const loop = (async () => {
    while (running) {
      const reading = await connectionsNow(db);
      samples.push({ at: reading.at, values: counters() });
      readings.push(reading);
      await sleep(SAMPLE_MS);
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return { samples, readings };
    },
  };
}

/** Starts counting the CPU of each group of processes of a drain; the function returned gives the seconds each spent since. */
function cpuCounters(of: { executors: Array<number | undefined>; servers: Child[]; model: BenchModelServer; dbName: string; postmaster: number }): () => Record<CpuGroup, number> {
  const sum = (values: number[]) => values.reduce((total, value) => total + value, 0);
  const [executors, servers, model] = [cpuSince(of.executors), cpuSince(of.servers.map((child) => child.process.pid)), cpuSince([of.model.pid])];
  const [database, postgres, broker, host] = [cpuOfDatabaseSince(of.dbName), cpuOfServerSince(of.postmaster), cpuOfCommandSince('beam.smp'), busySince()];
  const bench = process.cpuUsage();
  return () => {
    const own = process.cpuUsage(bench);
    return {
      executors: sum(executors()),
      database: database(),
      postgres: postgres(),
      model: sum(model()),
      servers: sum(servers()),
      broker: broker(),
      bench: (own.user + own.system) / 1e6,
      host: host(),
    };
  };
}

/** Claim and completion statements, and rows claimed, in `[from, to]`: a claim's rows share its transaction's now(), and so do a completion's. */
async function writesBetween(db: Knex, sessionIds: string[], from: number, to: number) {
  const within = (column: string) => `${column} between to_timestamp(? / 1000.0) and to_timestamp(? / 1000.0)`;
  const { rows } = (await db.raw(
    `with claimed as (
       select a.executor, a.started_at from invocation_attempts a join invocations i on i.id = a.invocation_id
        where i.session_id = any(?::uuid[]) and ${within('a.started_at')}
     )
     select (select count(distinct (executor, started_at))::int from claimed) as claims, (select count(*)::int from claimed) as claimed,
            (select count(distinct completed_at)::int from invocations where session_id = any(?::uuid[]) and status = 'COMPLETED' and ${within('completed_at')}) as completions`,
    [sessionIds, from, to, sessionIds, from, to],
  )) as { rows: Array<{ claims: number; claimed: number; completions: number }> };
  return rows[0]!;
}

async function main() {
  const started = new Date();
  const loadavgBefore = os.loadavg();
  const socket = Boolean(process.env.TEST_DATABASE_SOCKET_URL);
  const adminUrl = required(socket ? 'TEST_DATABASE_SOCKET_URL' : 'TEST_DATABASE_URL');
  const amqpUrl = required('TEST_AMQP_URL');
  const runId = `${Date.now().toString(36)}${crypto.randomBytes(2).toString('hex')}`;
  const dbName = `dy_scaleout_${runId}`;
  const queueName = `didyma.scaleout.${runId}`;
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'didyma-scale-out-'));
  const logFile = (name: string) => path.join(dataDir, `${name}.log`);
  console.log(`bench:scale-out: data and logs in ${dataDir}`);

  const admin = knexFactory({ client: 'pg', connection: adminUrl, pool: { min: 0, max: 1 } });
  await admin.raw(`create database ${dbName}`);
  const dbUrl = new URL(adminUrl);
  dbUrl.pathname = `/${dbName}`;
  const db = knexFactory({ client: 'pg', connection: dbUrl.toString(), pool: { min: 0, max: 2 } });
  const postmaster = parentPid(((await db.raw('select pg_backend_pid() as pid')) as { rows: Array<{ pid: number }> }).rows[0]!.pid);
  const ports = { auth: await freePort(), private: await freePort(), public: await freePort(), model: await freePort() };
  const common: Record<string, string> = {
    DATABASE_URL: dbUrl.toString(),
    DATABASE_POOL_MAX: String(CHART.externalDatabase.poolMax),
    DIDYMA_AMQP_URL: amqpUrl,
    DIDYMA_QUEUE_NAME: queueName,
    DIDYMA_DATA_DIR: dataDir,
    DIDYMA_DEV_MODE: 'true', // the model server listens on loopback
    DIDYMA_LOG_LEVEL: 'warn',
    DIDYMA_ADMIN_EMAIL: ADMIN.email,
    DIDYMA_ADMIN_PASSWORD: PASSWORD,
    DIDYMA_AUTH_PORT: String(ports.auth),
    DIDYMA_PRIVATE_PORT: String(ports.private),
    DIDYMA_PUBLIC_PORT: String(ports.public),
    DIDYMA_EXECUTOR_CONCURRENCY: String(CHART.executor.concurrency),
  };
  const url = (port: number) => `http://127.0.0.1:${port}`;
  const urls = { auth: url(ports.auth), private: url(ports.private), public: url(ports.public) };
  const servers: Child[] = [];
  let model: BenchModelServer | undefined;

  try {
    await runCli(['admin', 'bootstrap'], common, logFile('bootstrap'));
    // Every workspace's model version is its name: the model server answers any.
    model = await startModelServer('demo', { port: ports.model, delayMs: MODEL_MS, version: ANY_VERSION, env: common, logFile: logFile('model-server') });
    for (const name of ['auth', 'private', 'public'] as const) {
      const child = startNode(name, cli(['serve', name]), common, logFile(name));
      servers.push(child);
      await waitReady(child, `${urls[name]}/readyz`);
    }
    const home = await setUpTenant(urls, ADMIN, model);
    const tenants = [home];
    for (let i = 1; i < WORKSPACES; i++) tenants.push(await workspaceTenant(urls, ADMIN, db, model, home, `scale-out-${i}`));
    const body = JSON.stringify({ type: 'PREDICT', request: { type: 'FEATURES', body: model.body } });

    /** QUEUED invocations in fresh sessions of every workspace, no executor running; their sessions. */
    const queueBacklog = async (): Promise<string[]> => {
      const sessions = await Promise.all(tenants.map(async (tenant) => ({ tenant, ids: await tenant.sessions(SESSIONS_PER_WORKSPACE) })));
      const requests = sessions.flatMap(({ tenant, ids }) => ids.map((id) => ({ path: `${tenant.base}/session/${id}/invocation`, headers: tenant.headers })));
      const posted = await load({ url: urls.public, method: 'POST', body, requests, connections: POST_CONNECTIONS, durationSec: DRAIN_TIMEOUT_MS / 1000, amount: QUEUED });
      if (posted.statuses['201'] !== QUEUED) throw new Error(`queueing ${QUEUED} invocations: ${JSON.stringify(posted.statuses)}, ${posted.errors} errors`);
      return sessions.flatMap(({ ids }) => ids);
    };

    const drainWith = async (count: number): Promise<ScaleOutRow> => {
      const sessionIds = await queueBacklog();
      await db.raw('vacuum analyze invocations');
      const executors: Array<{ child: Child; port: number }> = [];
      for (let i = 0; i < count; i++) {
        const port = await freePort();
        executors.push({ child: startNode(`executor-${count}-${i}`, cli(['executor']), { ...common, DATABASE_POOL_MAX: String(POOL_MAX), DIDYMA_EXECUTOR_PORT: String(port), PGAPPNAME: EXECUTOR_APP }, logFile(`executor-${count}-${i}`)), port });
      }
      const sampler = startSampler(db, cpuCounters({ executors: executors.map(({ child }) => child.process.pid), servers, model: model!, dbName, postmaster }));
      let measured: Awaited<ReturnType<typeof sampler.stop>>;
      let allReady: number;
      try {
        await Promise.all(executors.map(({ child, port }) => waitReady(child, `${url(port)}/readyz`)));
        allReady = await databaseClockMs(db);
        await waitFinal(db, sessionIds, `${count} executors to drain ${QUEUED} invocations`, DRAIN_TIMEOUT_MS);
      } finally {
        // The sampler stops first: the executors' CPU can be read only while they run.
        measured = await sampler.stop();
        await Promise.all(executors.map(({ child }) => child.stop()));
      }
      const { samples, readings } = measured;
      // Executors that start first drain alone until the others are ready: the steady part begins after.
      const steady = steadyWindow([...(await completedAt(db, sessionIds)).values()], allReady);
      const whole = await throughput(db, sessionIds, 'started_at');
      const writes = await writesBetween(db, sessionIds, steady.from, steady.to);
      const grown = deltaOver(samples, steady.from, steady.to);
      if (!steady.completed || !grown) throw new Error(`${count} executors: too few completions after every executor was ready to measure; queue more (BENCH_SCALE_OUT_QUEUED)`);
      const seconds = (steady.to - steady.from) / 1000;
      const cpu = cpuFigures(grown, steady.completed);
      const connections = connectionFigures(readings);
      const figures = {
        modelCallsInFlight: (steady.rps * MODEL_MS) / 1000,
        slots: count * CHART.executor.concurrency,
        cores: cpu.cores,
        connections,
      };
      return {
        executors: count,
        queued: QUEUED,
        completed: whole.completed,
        failed: whole.failed,
        ...(whole.errors && { errors: whole.errors }),
        whole: { seconds: whole.seconds, rps: whole.rps },
        steady,
        claimsPerSecond: writes.claims / seconds,
        rowsPerClaim: writes.claimed / writes.claims,
        completionWritesPerSecond: writes.completions / seconds,
        ...cpu,
        ...figures,
        bound: boundOf(figures, { cpus: os.cpus().length, poolMax: POOL_MAX, executors: count }),
      };
    };

    const rows: ScaleOutRow[] = [];
    for (const count of COUNTS) {
      console.log(`bench:scale-out: ${QUEUED} queued, ${count} executor${count === 1 ? '' : 's'}`);
      const row = await drainWith(count);
      const failed = row.failed ? `, ${row.failed} failed (see the JSON)` : '';
      console.log(`bench:scale-out: ${count}: ${Math.round(row.steady.rps)}/s steady, ${Math.round(row.claimsPerSecond)} claims/s${failed}, bound by ${row.bound}`);
      rows.push(row);
    }
    const knee = kneeOf(rows);
    const fleet: Fleet = { executors: FLEET_EXECUTORS, rate: FLEET_RATE, poolMax: POOL_MAX };
    const report: ScaleOutReport = {
      date: started.toISOString(),
      machine: { cpus: os.cpus().length, model: os.cpus()[0]?.model ?? '', loadavgBefore, loadavgAfter: os.loadavg() },
      settings: {
        counts: COUNTS,
        queued: QUEUED,
        modelMs: MODEL_MS,
        concurrency: CHART.executor.concurrency,
        poolMax: POOL_MAX,
        workspaces: WORKSPACES,
        sessionsPerWorkspace: SESSIONS_PER_WORKSPACE,
        databaseTransport: socket ? 'socket' : 'tcp',
      },
      rows,
      ...(knee && { knee: { executors: knee.row.executors, reached: knee.reached, claimsPerSecond: knee.row.claimsPerSecond }, projection: projectTo(knee.row, fleet) }),
      fleet,
    };
    const table = scaleOutTable(report);
    console.log(`\n${table}\n`);
    const resultsDir = path.resolve(new URL('.', import.meta.url).pathname, 'results');
    fs.mkdirSync(resultsDir, { recursive: true });
    const file = path.join(resultsDir, `scale-out-${started.toISOString().slice(0, 19).replace(/:/g, '-')}Z.json`);
    fs.writeFileSync(file, `${JSON.stringify({ ...report, table }, null, 2)}\n`);
    console.log(`bench:scale-out: written to ${path.relative(process.cwd(), file)}`);
  } finally {
    await Promise.allSettled([...servers.map((child) => child.stop()), model?.close()]);
    await db.destroy();
    await admin.raw(`drop database if exists ${dbName} with (force)`).catch(() => undefined);
    await admin.destroy();
    await deleteWorkQueue(amqpUrl, queueName);
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
