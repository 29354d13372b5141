// `make bench-scale` (`npm run bench:scale`): how the lists and a need_context
// model's calls grow with the data. The platform runs as child processes from
// the build (auth, private, public, executor) on the real PostgreSQL and
// RabbitMQ of scripts/services, in front of the demo model server; rows are
// added with SQL between the sizes, then vacuumed and analysed as autovacuum
// would leave them. Each list is read at every size: its first page, a page at
// the far end through the `after` cursor, and the same page through `offset`
// (for comparison), plus what a COUNT(*) of the list costs alone (the
// counters of migration 0009 answer X-Total-Count instead). Then one
// session of BENCH_CONTEXT_CALLS calls to a need_context model, one after the
// other. Writes bench/results/scale-<date>.json; nothing here is a test.
//
// Environment: TEST_DATABASE_URL and TEST_AMQP_URL (scripts/services/all.sh env
// postgres rabbitmq); optional BENCH_SCALE_SIZES (1000,10000,100000),
// BENCH_SCALE_SAMPLES (40), BENCH_CONTEXT_CALLS (1000),
// BENCH_CONTEXT_MAX_INVOCATIONS (the platform's default when unset).
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import knexFactory, { type Knex } from 'knex';
import { cli, freePort, runCli, startNode, waitReady, type Child } from './lib/processes.js';
import { startModelServer, type BenchModelServer } from './lib/model-server.js';
import { setUpTenant, type Tenant } from './lib/tenant.js';
import { deleteWorkQueue } from '../test/support/services.js';
import { encodeCursor } from '../infra/http/pagination.js';
import { percentile, scaleVerdicts, type ListFigures, type ScaleReport } from './lib/scale-report.js';

const env = (name: string, fallback: string) => process.env[name] || fallback;
const SIZES = env('BENCH_SCALE_SIZES', '1000,10000,100000').split(',').map(Number);
const SAMPLES = Number(env('BENCH_SCALE_SAMPLES', '40'));
const CONTEXT_CALLS = Number(env('BENCH_CONTEXT_CALLS', '1000'));
const WARM_UP_CALLS = 100;
const LIMIT = 100;
const PASSWORD = 'Correct-Horse-Battery-42';
const ADMIN = { email: 'bench@didyma.local', password: PASSWORD };
const IRIS = JSON.stringify({ sepal_length: 5.1, sepal_width: 3.5, petal_length: 1.4, petal_width: 0.2 });

function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: run \`make bench-scale\` (it starts PostgreSQL and RabbitMQ with scripts/services and exports their URLs).`);
  return value;
}

/** One list under measurement: its path, the SQL that seeds it, and the rows it selects. */
interface ListUnderTest {
  name: 'models' | 'invocations' | 'feedback';
  path: string;
  /** Adds rows until the list holds `size`. */
  grow(size: number): Promise<void>;
  /** The list's rows in the API's order, as SQL (for the deep cursor and the bare count). */
  rows(): Knex.QueryBuilder;
  table: string;
}

async function main() {
  const started = new Date();
  const adminUrl = required('TEST_DATABASE_URL');
  const amqpUrl = required('TEST_AMQP_URL');
  const runId = `${Date.now().toString(36)}${crypto.randomBytes(2).toString('hex')}`;
  const dbName = `dy_scale_${runId}`;
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'didyma-scale-'));
  const logFile = (name: string) => path.join(dataDir, `${name}.log`);
  console.log(`bench-scale: data and logs in ${dataDir}`);

  const admin = knexFactory({ client: 'pg', connection: adminUrl, pool: { min: 0, max: 1 } });
  await admin.raw(`create database ${dbName}`);
  const dbUrl = new URL(adminUrl);
  dbUrl.pathname = `/${dbName}`;
  const db = knexFactory({ client: 'pg', connection: dbUrl.toString(), pool: { min: 0, max: 2 } });
  const ports = { auth: await freePort(), private: await freePort(), public: await freePort(), executor: await freePort(), model: await freePort() };
  const common: Record<string, string> = {
    DATABASE_URL: dbUrl.toString(),
    DIDYMA_AMQP_URL: amqpUrl,
    DIDYMA_QUEUE_NAME: `didyma.scale.${runId}`,
    DIDYMA_DATA_DIR: dataDir,
    DIDYMA_DEV_MODE: 'true', // the model server listens on loopback
    DIDYMA_LOG_LEVEL: 'warn',
    DIDYMA_ADMIN_EMAIL: ADMIN.email,
    DIDYMA_ADMIN_PASSWORD: PASSWORD,
    DIDYMA_AUTH_PORT: String(ports.auth),
    DIDYMA_PRIVATE_PORT: String(ports.private),
    DIDYMA_PUBLIC_PORT: String(ports.public),
    DIDYMA_EXECUTOR_PORT: String(ports.executor),
    ...(process.env.BENCH_CONTEXT_MAX_INVOCATIONS && { DIDYMA_CONTEXT_MAX_INVOCATIONS: process.env.BENCH_CONTEXT_MAX_INVOCATIONS }),
  };
  const children: Child[] = [];
  const url = (port: number) => `http://127.0.0.1:${port}`;
  const start = async (name: string, args: string[], readyUrl: string) => {
    const child = startNode(name, cli(args), common, logFile(name));
    children.push(child);
    await waitReady(child, readyUrl);
  };
  let model: BenchModelServer | undefined;

  try {
    await runCli(['admin', 'bootstrap'], common, logFile('bootstrap'));
    model = await startModelServer('demo', { port: ports.model, delayMs: 1, env: common, logFile: logFile('model-server') });
    await Promise.all([
      start('auth', ['serve', 'auth'], `${url(ports.auth)}/readyz`),
      start('private', ['serve', 'private'], `${url(ports.private)}/readyz`),
      start('public', ['serve', 'public'], `${url(ports.public)}/readyz`),
      start('executor', ['executor'], `${url(ports.executor)}/readyz`),
    ]);
    const tenant = await setUpTenant({ auth: url(ports.auth), private: url(ports.private), public: url(ports.public) }, ADMIN, model, { need_context: true });
    const [listSession, feedbackSession, contextSession, warmUpSession] = await tenant.sessions(4);
    const lists = await listsUnderTest(db, tenant, listSession!, feedbackSession!);

    const figures: ListFigures[] = [];
    for (const size of SIZES) {
      for (const list of lists) await list.grow(size);
      await db.raw('vacuum analyze models, invocations');
      for (const list of lists) {
        const measured = await measureList(db, tenant, url(ports.public), list, size);
        figures.push(measured);
        console.log(`bench-scale: ${list.name} at ${size}: first ${measured.firstPage.p50Ms} ms, after ${measured.afterDeep.p50Ms} ms, offset ${measured.offsetDeep.p50Ms} ms, count ${measured.count.p50Ms} ms (${measured.count.plan})`);
      }
    }

    // The first calls of a process run cold (JIT, caches): a session of their own takes them.
    await callInTurn(tenant, url(ports.public), warmUpSession!, model, WARM_UP_CALLS);
    const context = await contextSessionFigures(db, tenant, url(ports.public), contextSession!, model);
    console.log(`bench-scale: need_context calls ${JSON.stringify(context.windows)}`);

    const report: ScaleReport = {
      date: started.toISOString(),
      machine: { cpus: os.cpus().length, model: os.cpus()[0]?.model ?? '', memoryGiB: Math.round(os.totalmem() / 2 ** 30), loadAverage: os.loadavg() },
      settings: { sizes: SIZES, samples: SAMPLES, limit: LIMIT, contextCalls: CONTEXT_CALLS, contextMaxInvocations: Number(common.DIDYMA_CONTEXT_MAX_INVOCATIONS ?? 50), database: 'PostgreSQL' },
      lists: figures,
      context,
      verdicts: [],
    };
    report.verdicts = scaleVerdicts(report);
    for (const verdict of report.verdicts) console.log(`bench-scale: ${verdict.met ? 'met ' : 'MISSED'} ${verdict.what}: ${verdict.figure}`);
    const resultsDir = path.resolve(new URL('.', import.meta.url).pathname, 'results');
    fs.mkdirSync(resultsDir, { recursive: true });
    const file = path.join(resultsDir, `scale-${started.toISOString().slice(0, 19).replace(/:/g, '-')}Z.json`);
    fs.writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
    console.log(`bench-scale: written to ${path.relative(process.cwd(), file)}`);
  } finally {
    for (const child of children.reverse()) await child.stop();
    await model?.close();
    await db.destroy();
    await admin.raw(`drop database if exists ${dbName} with (force)`);
    await admin.destroy();
    await deleteWorkQueue(amqpUrl, common.DIDYMA_QUEUE_NAME!).catch(() => undefined);
  }
}

/** The three lists: the workspace's models, a session's invocations, and a session's feedback (half of its rows). */
async function listsUnderTest(db: Knex, tenant: Tenant, listSession: string, feedbackSession: string): Promise<ListUnderTest[]> {
  const registered = (await db('models').first('*')) as { id: number; workspace_id: number; created_by_id: number };
  const session = (await db('sessions').where({ id: listSession }).first('user_id')) as { user_id: number };
  const ids = { workspaceId: registered.workspace_id, modelId: registered.id, userId: session.user_id };
  const copied = ((await db('information_schema.columns').where({ table_name: 'models' }).pluck('column_name')) as string[]).filter(
    (column) => !['id', 'model_code', 'explains_id', 'created_at', 'deleted_at'].includes(column),
  );
  const columns = copied.map((column) => `"${column}"`).join(', ');
  const countOf = async (query: Knex.QueryBuilder) => Number(((await query.clone().count('* as n').first()) as { n: string }).n);
  // Rows a millisecond apart, after the registered model: distinct, increasing creation times.
  const instant = (g: string) => `timestamptz '2030-01-01' + ${g} * interval '1 millisecond'`;
  const invocations = (sessionId: string, feedbackEvery: number) => async (target: number) => {
    const have = await countOf(db('invocations').where({ session_id: sessionId }));
    const want = target * feedbackEvery;
    if (have >= want) return;
    await db.raw(
      `insert into invocations (id, workspace_id, session_id, user_id, model_id, "order", type, request_type, body, status, response, model_key, created_at, started_at, completed_at)
       select gen_random_uuid(), ?, ?, ?, ?, g,
              case when ? > 1 and g % ? = 1 then 'DATA_SUBMISSION' else 'PREDICT' end,
              case when ? > 1 and g % ? = 1 then 'FEEDBACK' else 'FEATURES' end,
              ?, 'COMPLETED', ?, '', ${instant('g')}, ${instant('g')}, ${instant('g')}
       from generate_series(?::integer, ?::integer) g`,
      [ids.workspaceId, sessionId, ids.userId, ids.modelId, feedbackEvery, feedbackEvery, feedbackEvery, feedbackEvery, IRIS, '{"outputs":[{"name":"predict","datatype":"BYTES","shape":[1],"data":["setosa"]}]}', have, want - 1],
    );
    await db('sessions').where({ id: sessionId }).update({ next_order: want });
  };
  return [
    {
      name: 'models',
      path: '/api/model',
      table: 'models',
      rows: () => db('models').where({ workspace_id: ids.workspaceId }).whereNull('deleted_at'),
      grow: async (target) => {
        const have = await countOf(db('models').where({ workspace_id: ids.workspaceId }).whereNull('deleted_at'));
        if (have >= target) return;
        await db.raw(
          `insert into models (model_code, created_at, ${columns}) select 'scale-' || g, ${instant('g')}, ${columns} from models m, generate_series(?::integer, ?::integer) g where m.id = ?`,
          [have, target - 1, ids.modelId],
        );
      },
    },
    {
      name: 'invocations',
      path: `${tenant.base}/session/${listSession}/invocation`,
      table: 'invocations',
      rows: () => db('invocations').where({ workspace_id: ids.workspaceId, session_id: listSession }),
      grow: invocations(listSession, 1),
    },
    {
      name: 'feedback',
      path: `${tenant.base}/session/${feedbackSession}/invocation?type=DATA_SUBMISSION`,
      table: 'invocations',
      rows: () => db('invocations').where({ workspace_id: ids.workspaceId, session_id: feedbackSession, type: 'DATA_SUBMISSION' }),
      grow: invocations(feedbackSession, 2),
    },
  ];
}

async function measureList(db: Knex, tenant: Tenant, base: string, list: ListUnderTest, size: number): Promise<ListFigures> {
  const join = (query: string) => `${list.path}${list.path.includes('?') ? '&' : '?'}${query}`;
  // The cursor of the row just before the last page: what a client walking the Link headers reaches there.
  const before = (await list
    .rows()
    .orderBy([{ column: 'created_at', order: 'desc' }, { column: 'id', order: 'desc' }])
    .offset(size - LIMIT - 1)
    .first('id', db.raw(`to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as at`))) as { id: string | number; at: string };
  const cursor = encodeCursor({ at: before.at, id: before.id });
  return {
    list: list.name,
    rows: size,
    firstPage: await timedGets(base, tenant.token, join(`limit=${LIMIT}`), size),
    afterDeep: await timedGets(base, tenant.token, join(`limit=${LIMIT}&after=${cursor}`), size),
    offsetDeep: await timedGets(base, tenant.token, join(`limit=${LIMIT}&offset=${size - LIMIT}`), size),
    count: await timedCount(db, list.rows()),
  };
}

/** Sequential GETs after a warm-up: their latency at the client, the bytes of a page, and a check of what came back. */
async function timedGets(base: string, token: string, pathAndQuery: string, expectedTotal: number) {
  const times: number[] = [];
  let bytes = 0;
  for (let i = 0; i < SAMPLES + 3; i++) {
    const began = performance.now();
    const reply = await fetch(base + pathAndQuery, { headers: { authorization: `Bearer ${token}` } });
    const text = await reply.text();
    const ms = performance.now() - began;
    if (reply.status !== 200) throw new Error(`GET ${pathAndQuery}: ${reply.status} ${text}`);
    if (Number(reply.headers.get('x-total-count')) !== expectedTotal) throw new Error(`GET ${pathAndQuery}: X-Total-Count ${reply.headers.get('x-total-count')}, expected ${expectedTotal}`);
    if ((JSON.parse(text) as unknown[]).length !== LIMIT) throw new Error(`GET ${pathAndQuery}: not a full page`);
    if (i >= 3) times.push(ms);
    bytes = Buffer.byteLength(text);
  }
  return { p50Ms: percentile(times, 50), p99Ms: percentile(times, 99), pageBytes: bytes };
}

/** A COUNT(*) of the list alone, and the plan PostgreSQL runs it with. */
async function timedCount(db: Knex, rows: Knex.QueryBuilder) {
  const counted = rows.clone().count('* as n');
  const times: number[] = [];
  for (let i = 0; i < SAMPLES + 3; i++) {
    const began = performance.now();
    await counted.clone();
    if (i >= 3) times.push(performance.now() - began);
  }
  const explained = (await db.raw(`explain (format json) ${counted.toString()}`)).rows[0]['QUERY PLAN'][0].Plan as PlanNode;
  return { p50Ms: percentile(times, 50), plan: scanOf(explained) };
}

interface PlanNode {
  'Node Type': string;
  'Index Name'?: string;
  Plans?: PlanNode[];
}

const scanOf = (node: PlanNode): string =>
  node['Node Type'].includes('Scan') ? `${node['Node Type']}${node['Index Name'] ? ` on ${node['Index Name']}` : ''}` : node.Plans?.[0] ? scanOf(node.Plans[0]) : node['Node Type'];

/** `calls` predictions in the session, each sent once the one before it has COMPLETED. */
async function callInTurn(tenant: Tenant, base: string, sessionId: string, model: BenchModelServer, calls: number) {
  const headers = { authorization: `Bearer ${tenant.token}`, 'content-type': 'application/json' };
  const path = `${base}${tenant.base}/session/${sessionId}/invocation`;
  for (let i = 0; i < calls; i++) {
    const created = await fetch(path, { method: 'POST', headers, body: JSON.stringify({ type: 'PREDICT', request: { type: 'FEATURES', body: model.body } }) });
    const id = ((await created.json()) as { id: string }).id;
    for (;;) {
      const polled = (await (await fetch(`${path}/${id}`, { headers })).json()) as { status: string; error?: string };
      if (polled.status === 'COMPLETED') break;
      if (polled.status === 'ERROR') throw new Error(`call ${i} failed: ${polled.error}`);
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
  }
}

/**
 * CONTEXT_CALLS invocations of the need_context model in one session, one
 * after the other; each call's run (claimed → COMPLETED, which holds the
 * context read and the model call) from the invocation's own timestamps.
 */
async function contextSessionFigures(db: Knex, tenant: Tenant, base: string, sessionId: string, model: BenchModelServer) {
  await callInTurn(tenant, base, sessionId, model, CONTEXT_CALLS);
  const runs = (await db('invocations')
    .where({ session_id: sessionId })
    .orderBy('order')
    .select('order', db.raw('extract(epoch from (completed_at - started_at)) * 1000 as run_ms'), db.raw('extract(epoch from (completed_at - created_at)) * 1000 as total_ms'))) as Array<{ order: number; run_ms: string; total_ms: string }>;
  const windowOf = (from: number, to: number) => {
    const part = runs.filter((run) => run.order >= from && run.order < to);
    return { calls: `${from + 1}-${to}`, runP50Ms: percentile(part.map((r) => Number(r.run_ms)), 50), totalP50Ms: percentile(part.map((r) => Number(r.total_ms)), 50) };
  };
  const tenth = Math.max(1, Math.floor(CONTEXT_CALLS / 10));
  return {
    calls: runs.length,
    windows: [windowOf(0, tenth), windowOf(Math.floor(CONTEXT_CALLS / 2) - Math.floor(tenth / 2), Math.floor(CONTEXT_CALLS / 2) + Math.ceil(tenth / 2)), windowOf(CONTEXT_CALLS - tenth, CONTEXT_CALLS)],
  };
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
