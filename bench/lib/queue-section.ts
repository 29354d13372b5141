import crypto from 'node:crypto';
import type { Knex } from 'knex';
import { BASELINE_TABLE_SQL } from '../baselines/common.js';
import { cpuOfGroupsSince, cpuOfServerSince, cpuSince } from './cpu.js';
import { completedBetween, openCount, queuedCount } from './invocations.js';
import { load, type LoadOptions } from './load.js';
import { startModelServer, type BenchModelServer } from './model-server.js';
import { script, type Child } from './processes.js';
import { interleaved, interleavedDrains, measuredRun, type DrainContender, type DrainOptions, type Served } from './queues.js';
import type { DrainName, QueuesReport } from './targets.js';
import type { Tenant } from './tenant.js';

// The queue comparison's processes and data (bench/lib/queues.ts measures):
// the baselines of bench/baselines/ started as the platform's servers are,
// their backlogs made through their own APIs, their tables counted.

export interface QueueSectionDeps {
  db: Knex;
  /** The run's PostgreSQL server now, for the CPU of all its processes. */
  postmaster(): number;
  /** Starts a child process and waits for it to answer `readyUrl`. */
  start(name: string, nodeArgs: string[], readyUrl: string): Promise<Child>;
  /** The platform's executor, started as the main run starts it. */
  startExecutor(): Promise<Child>;
  freePort(): Promise<number>;
  publicUrl: string;
  publicPid: number | undefined;
  /** The run's tenant (its model server) for POST and GET, and a tenant of a workspace of its own on `model`, for each drain. */
  tenant: Tenant;
  drainTenant(model: BenchModelServer, name: string): Promise<Tenant & { workspaceId: number }>;
  /** The run's POST body: the same in every contender. */
  invokeBody: string;
  /** The demo model server's settings, for the drains' model servers. */
  modelServerEnv: Record<string, string>;
  modelServerVersion: string;
  logFile(name: string): string;
  queuePrefix: string;
  log(message: string): void;
}

export interface QueueSectionSettings {
  rounds: number;
  durationSec: number;
  warmUpSec: number;
  connections: number;
  sessions: number;
  /** The demo model server's inference time of each drain, ms. */
  modelDelaysMs: number[];
  drain: Omit<DrainOptions, 'sleep' | 'now'>;
}

const url = (port: number) => `http://127.0.0.1:${port}`;
const pause = (child: Child) => process.kill(child.process.pid!, 'SIGSTOP');
const resume = (child: Child) => process.kill(child.process.pid!, 'SIGCONT');
const count = async (db: Knex, sql: string, bindings: Knex.RawBinding[]) => Number(((await db.raw(sql, bindings)) as { rows: Array<{ n: string }> }).rows[0]!.n);

/** Runs the queue comparison: POST, GET, then a drain at each model delay; leaves the platform's tables as it found them. */
export async function queueComparison(deps: QueueSectionDeps, settings: QueueSectionSettings): Promise<QueuesReport> {
  const { db } = deps;
  await db.raw(BASELINE_TABLE_SQL);
  const started: Child[] = [];
  const startBaseline = async (name: string, file: string, args: string[]) => {
    const port = await deps.freePort();
    const child = await deps.start(name, script(file, [String(port), ...args]), `${url(port)}/healthz`);
    started.push(child);
    return { child, url: url(port) };
  };
  const didymaSessions: string[] = [];
  try {
    const naiveEnqueue = await startBaseline('baseline-naive-enqueue', 'bench/baselines/naive-enqueue.ts', [`${deps.queuePrefix}.naive`]);
    const naiveRead = await startBaseline('baseline-naive-read', 'bench/baselines/naive-read.ts', []);
    const jobApi = await startBaseline('baseline-job-queue-api', 'bench/baselines/job-queue.ts', ['api', 'bench_jobs_post']);
    const naivePaths = Array.from({ length: settings.sessions }, () => `/session/${crypto.randomUUID()}/invocation`);
    didymaSessions.push(...(await deps.tenant.sessions(settings.sessions)));
    const didymaPaths = didymaSessions.map((id) => `${deps.tenant.base}/session/${id}/invocation`);
    const post = (at: string, paths: string[], headers: Record<string, string>) => (durationSec: number) =>
      load({ url: at, method: 'POST', headers, body: deps.invokeBody, paths, connections: settings.connections, durationSec });
    const json = { 'content-type': 'application/json' };
    const served = (pid: number | undefined, run: (durationSec: number) => ReturnType<typeof load>): Served => ({ load: run, meter: () => cpuOfGroupsSince([pid], deps.postmaster()) });
    const posts = {
      naive: served(naiveEnqueue.child.process.pid, post(naiveEnqueue.url, naivePaths, json)),
      didyma: served(deps.publicPid, post(deps.publicUrl, didymaPaths, deps.tenant.headers)),
      jobQueue: served(jobApi.child.process.pid, post(jobApi.url, naivePaths, json)),
    };
    deps.log('(Q) POST: warm-up, then rounds of naive enqueue, didyma, pg-boss send');
    for (const each of Object.values(posts)) await each.load(settings.warmUpSec);
    const enqueue = await interleaved(['naive', 'didyma', 'jobQueue'] as const, settings.rounds, (name) => measuredRun(posts[name], settings.durationSec));
    await jobApi.child.stop();

    deps.log('(Q) GET by id: rounds of naive read, didyma');
    const didymaRows = (await db('invocations').whereIn('session_id', didymaSessions).select('id', 'session_id').limit(2000)) as Array<{ id: string; session_id: string }>;
    const naiveRows = (await db.raw('select id, session_id from baseline.invocations limit 2000')) as { rows: Array<{ id: string; session_id: string }> };
    const get = (at: string, rows: Array<{ id: string; session_id: string }>, base: string, headers: Record<string, string>) => (durationSec: number) =>
      load({ url: at, headers, paths: rows.map((row) => `${base}/session/${row.session_id}/invocation/${row.id}`), connections: settings.connections, durationSec });
    const reads = {
      naive: served(naiveRead.child.process.pid, get(naiveRead.url, naiveRows.rows, '', {})),
      didyma: served(deps.publicPid, get(deps.publicUrl, didymaRows, deps.tenant.base, deps.tenant.headers)),
    };
    for (const each of Object.values(reads)) await each.load(settings.warmUpSec);
    const read = await interleaved(['naive', 'didyma'] as const, settings.rounds, (name) => measuredRun(reads[name], settings.durationSec));

    // The POSTs' backlogs are not the drains': without an executor they are still queued.
    await db('invocations').whereIn('session_id', didymaSessions).delete();
    await db.raw('truncate baseline.invocations');
    await db.raw(`delete from pgboss.job where name = 'bench_jobs_post'`);

    const drains: QueuesReport['drains'] = [];
    for (const [index, delayMs] of settings.modelDelaysMs.entries()) {
      drains.push(await drainAt(deps, settings, delayMs, `queues-${index + 1}`, startBaseline, naiveEnqueue.url, naivePaths, didymaSessions));
    }
    return { rounds: settings.rounds, durationSec: settings.durationSec, enqueue, read, drains };
  } finally {
    await Promise.allSettled(started.map((child) => child.stop()));
    await db('invocations').whereIn('session_id', didymaSessions).delete();
  }
}

type StartBaseline = (name: string, file: string, args: string[]) => Promise<{ child: Child; url: string }>;

/** The drains in front of a demo model server of `delayMs`: the naive executor, didyma's, pg-boss's worker, and the FIFO claim on the platform's table. */
async function drainAt(
  deps: QueueSectionDeps,
  settings: QueueSectionSettings,
  delayMs: number,
  name: string,
  startBaseline: StartBaseline,
  naiveEnqueueUrl: string,
  naivePaths: string[],
  sessionsToDelete: string[],
): Promise<QueuesReport['drains'][number]> {
  const { db } = deps;
  const model = await startModelServer('demo', { port: await deps.freePort(), delayMs, version: deps.modelServerVersion, env: deps.modelServerEnv, logFile: deps.logFile(`${name}-model-server`) });
  const consumers: Child[] = [];
  try {
    const direct = await load({ url: model.inferUrl, method: 'POST', headers: { 'content-type': 'application/json' }, body: model.inferBody, connections: 1, durationSec: 2 });
    const label = delayMs ? `${delayMs} ms model` : 'model with no added delay';
    deps.log(`(Q) drain, ${label}: direct call p50 ${direct.p50} ms`);
    const tenant = await deps.drainTenant(model, name);
    const didymaSessions = await tenant.sessions(settings.sessions);
    const fifoSessions = await tenant.sessions(settings.sessions);
    sessionsToDelete.push(...didymaSessions, ...fifoSessions);
    const jobQueue = `bench_jobs_${name.replace(/\W/g, '_')}`;
    const jobApi = await startBaseline(`baseline-job-queue-api-${name}`, 'bench/baselines/job-queue.ts', ['api', jobQueue]);
    const own = (child: Child) => {
      consumers.push(child);
      return child;
    };
    const naive = own((await startBaseline(`baseline-naive-executor-${name}`, 'bench/baselines/naive-executor.ts', [model.inferUrl, 'baseline'])).child);
    const fifo = own((await startBaseline(`baseline-fifo-executor-${name}`, 'bench/baselines/naive-executor.ts', [model.inferUrl, 'platform', String(tenant.workspaceId)])).child);
    const worker = own((await startBaseline(`baseline-job-queue-worker-${name}`, 'bench/baselines/job-queue.ts', ['worker', jobQueue, model.inferUrl])).child);
    const executor = own(await deps.startExecutor());
    for (const child of consumers) pause(child);

    const fill = (at: string, paths: string[], headers: Record<string, string>) => async (amount: number) => {
      await load({ url: at, method: 'POST', headers, body: JSON.stringify({ type: 'PREDICT', request: { type: 'FEATURES', body: model.body } }), paths, connections: settings.connections, durationSec: 3600, amount } satisfies LoadOptions);
    };
    const meterOf = (child: Child) => () => {
      const consumerCpu = cpuSince([child.process.pid, model.pid]);
      const postgres = cpuOfServerSince(deps.postmaster());
      return () => {
        const [consumerSeconds, modelSeconds] = consumerCpu() as [number, number];
        return { consumer: consumerSeconds, postgres: postgres(), model: modelSeconds };
      };
    };
    const json = { 'content-type': 'application/json' };
    const platformContender = (child: Child, sessions: string[]): DrainContender => ({
      fill: fill(deps.publicUrl, sessions.map((id) => `${tenant.base}/session/${id}/invocation`), tenant.headers),
      pause: () => pause(child),
      resume: () => resume(child),
      queued: () => queuedCount(db, sessions),
      open: () => openCount(db, sessions),
      completedBetween: (from, to) => completedBetween(db, sessions, from, to),
      meter: meterOf(child),
    });
    const contenders: Record<DrainName, DrainContender> = {
      naive: {
        fill: fill(naiveEnqueueUrl, naivePaths, json),
        pause: () => pause(naive),
        resume: () => resume(naive),
        queued: () => count(db, `select count(*) as n from baseline.invocations where status = 'QUEUED'`, []),
        open: () => count(db, `select count(*) as n from baseline.invocations where status in ('QUEUED', 'IN_PROGRESS')`, []),
        completedBetween: (from, to) => count(db, `select count(*) as n from baseline.invocations where status = 'COMPLETED' and completed_at >= ? and completed_at < ?`, [from, to]),
        meter: meterOf(naive),
      },
      didyma: platformContender(executor, didymaSessions),
      jobQueue: {
        fill: fill(jobApi.url, naivePaths, json),
        pause: () => pause(worker),
        resume: () => resume(worker),
        queued: () => count(db, `select count(*) as n from pgboss.job where name = ? and state in ('created', 'retry')`, [jobQueue]),
        open: () => count(db, `select count(*) as n from pgboss.job where name = ? and state in ('created', 'retry', 'active')`, [jobQueue]),
        completedBetween: (from, to) => count(db, `select count(*) as n from pgboss.job where name = ? and state = 'completed' and completed_on >= ? and completed_on < ?`, [jobQueue, from, to]),
        meter: meterOf(worker),
      },
      fifo: platformContender(fifo, fifoSessions),
    };
    const runs = await interleavedDrains(contenders, ['naive', 'didyma', 'jobQueue', 'fifo'], settings.rounds, settings.drain, (message) => deps.log(`(Q) drain, ${label}: ${message}`));
    for (const child of consumers) resume(child);
    await jobApi.child.stop();
    return { model: label, directP50: direct.p50, runs };
  } finally {
    for (const child of consumers) {
      try {
        resume(child);
      } catch {
        // already gone
      }
    }
    await Promise.allSettled(consumers.map((child) => child.stop()));
    await model.close();
  }
}
