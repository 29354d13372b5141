import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createDemoModelServer, type DemoModelServer } from '../../demo/model-server/server.js';
import { startTestPlatform, testSecretKeyFile, unique, type TestPlatform } from '../support/platform.js';
import { sharedDatabaseUrl } from '../support/database.js';
import { IRIS, registeredIris, tenant, type Tenant } from '../support/fixtures.js';
import { until } from '../support/until.js';
import { deleteWorkQueue, requireEnv } from '../support/services.js';

// An executor killed with SIGKILL in the middle of a load: its claimed runs
// must move to the other executor once their leases run out, nothing may be
// lost, and no invocation may have a result accepted twice. Model calls the
// dead executor made but never committed are run again: counted and reported.

const TOTAL = 2000;
const LEASE_SECONDS = 3;
const LOAD_MS = 180_000;

/** `didyma executor` in a child process of its own, so it can be killed outright. */
function executorProcess(env: Record<string, string>, name: string): ChildProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', 'cli/entry.ts', 'executor'], { env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-4000)));
  child.on('exit', (code) => {
    if (code) console.error(`executor ${name} exited with ${code}: ${stderr}`);
  });
  return child;
}

describe('an executor killed with SIGKILL under load (real PostgreSQL and RabbitMQ)', function () {
  this.timeout(600_000);
  let t: TestPlatform;
  let owner: Tenant;
  let demo: DemoModelServer;
  let version: string;
  let queueName: string;
  let amqpUrl: string;
  let databaseUrl: string;
  let modelId: number;
  const audit = unique('kill_audit').replace(/-/g, '_');
  const children: ChildProcess[] = [];
  const dataDirs: string[] = [];
  const base = () => `/api/model/iris-classifier/version/${version}`;

  before(async () => {
    amqpUrl = requireEnv('TEST_AMQP_URL', 'rabbitmq');
    databaseUrl = await sharedDatabaseUrl();
    queueName = unique('dy-kill');
    // The API servers and their relay only: every run happens in the two executor processes.
    t = await startTestPlatform({ amqpUrl, queueName, maxInFlight: 256 });
    version = unique('kill');
    demo = createDemoModelServer({ version, inferenceDelayMs: 5 });
    const { url } = await demo.listen(0, '127.0.0.1');
    owner = await tenant(t);
    modelId = await registeredIris(t, owner, url, version);
    // Every transition into COMPLETED of this model's invocations, with the lease that made it.
    const db = t.platform.db;
    await db.raw(`create table ${audit} (invocation_id uuid not null, lease integer not null)`);
    await db.raw(`create function ${audit}() returns trigger language plpgsql as $$
      begin
        if new.status = 'COMPLETED' and old.status <> 'COMPLETED' and new.model_id = ${modelId} then
          insert into ${audit} values (new.id, new.attempts);
        end if;
        return new;
      end $$`);
    await db.raw(`create trigger ${audit} after update on invocations for each row execute function ${audit}()`);
  });

  after(async () => {
    for (const child of children) child.kill('SIGKILL');
    const db = t?.platform.db;
    await db?.raw(`drop trigger if exists ${audit} on invocations`);
    await db?.raw(`drop function if exists ${audit}()`);
    await db?.raw(`drop table if exists ${audit}`);
    await demo?.close();
    await t?.close();
    await deleteWorkQueue(amqpUrl, queueName);
    for (const dir of dataDirs) fs.rmSync(dir, { recursive: true, force: true });
  });

  function startExecutor(name: string): ChildProcess {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'didyma-kill-'));
    dataDirs.push(dataDir);
    const child = executorProcess(
      {
        DATABASE_URL: databaseUrl,
        DIDYMA_AMQP_URL: amqpUrl,
        DIDYMA_QUEUE_NAME: queueName,
        DIDYMA_DATA_DIR: dataDir,
        DIDYMA_SECRET_KEY_FILE: testSecretKeyFile,
        DIDYMA_DEV_MODE: 'true',
        DIDYMA_LOG_LEVEL: 'warn',
        DIDYMA_EXECUTOR_LEASE_SECONDS: String(LEASE_SECONDS),
        DIDYMA_RELAY_POLL_MS: '200',
        DIDYMA_EXECUTOR_PORT: '0',
      },
      name,
    );
    children.push(child);
    return child;
  }

  const count = async (where: string) => Number(((await t.platform.db.raw(`select count(*)::int as n from invocations where model_id = ? and ${where}`, [modelId])).rows[0] as { n: number }).n);

  it(`loses none of ${TOTAL} invocations and accepts no result twice; repeated model calls are counted`, async () => {
    const doomed = startExecutor('doomed');
    startExecutor('survivor');
    const sessions: string[] = [];
    for (let i = 0; i < 16; i++) sessions.push((await t.public.post(`${base()}/session`, { token: owner.token })).body.id as string);

    const accepted: string[] = [];
    let sent = 0;
    const load = Promise.all(
      sessions.map(async (session) => {
        while (sent < TOTAL) {
          sent += 1;
          const reply = await t.public.post(`${base()}/session/${session}/invocation`, { token: owner.token, json: { type: 'PREDICT', request: { type: 'FEATURES', body: IRIS } } });
          expect(reply.status, reply.text).to.equal(201);
          accepted.push(reply.body.id as string);
        }
      }),
    );
    await until(async () => (await count(`status = 'COMPLETED'`)) >= TOTAL / 4, 'a quarter of the invocations to complete', LOAD_MS);
    doomed.kill('SIGKILL');
    const killedAt = Date.now();
    const completedAtKill = await count(`status = 'COMPLETED'`);
    const heldAtKill = await count(`status = 'IN_PROGRESS'`);
    await load;
    await until(async () => (await count(`status in ('QUEUED', 'IN_PROGRESS')`)) === 0, 'every invocation to finish', LOAD_MS);
    const finishedAfterMs = Date.now() - killedAt;

    const statuses = (await t.platform.db('invocations').whereIn('id', accepted).select('status')) as Array<{ status: string }>;
    expect(accepted, 'accepted').to.have.length(TOTAL);
    expect(statuses.filter((row) => row.status === 'COMPLETED'), 'lost: an accepted invocation not COMPLETED').to.have.length(TOTAL);
    const accepts = (await t.platform.db.raw(`select invocation_id, count(*)::int as n from ${audit} group by invocation_id having count(*) > 1`)).rows as unknown[];
    expect(accepts, 'results accepted twice').to.deep.equal([]);
    const acceptedResults = Number(((await t.platform.db.raw(`select count(*)::int as n from ${audit}`)).rows[0] as { n: number }).n);
    expect(acceptedResults, 'one accepted result per invocation').to.equal(TOTAL);
    const calls = demo.stats()[`iris-classifier:${version}`] ?? 0;
    const repeated = calls - TOTAL;
    expect(repeated, 'model calls repeated').to.be.at.least(0);
    expect(completedAtKill, 'killed in the middle of the load').to.be.below(TOTAL);
    console.log(
      `      SIGKILL of one of two executors at ${completedAtKill}/${TOTAL} completed (${heldAtKill} IN_PROGRESS): ` +
        `0 lost, 0 accepted twice, ${repeated} model calls repeated; all finished ${(finishedAfterMs / 1000).toFixed(1)} s after the kill (lease ${LEASE_SECONDS} s)`,
    );
  });
});
