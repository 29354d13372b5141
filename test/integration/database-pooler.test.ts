import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createDatabase, type Db } from '../../infra/db/database.js';
import { addMember, createUser, createWorkspace } from '../../features/identity/admin.js';
import { openEventStream, statusesOf } from '../support/event-stream-client.js';
import { didymaProcess, exitOf } from '../support/didyma-process.js';
import { IRIS, demoDeployment, filesystemStorage, modelPayload, startDemoModelServer, upload } from '../support/fixtures.js';
import { Client } from '../support/http.js';
import { freePorts, type ManagedProcess } from '../support/model-servers.js';
import { PASSWORD, login, testKeys, testSecretKeyFile, unique } from '../support/platform.js';
import { createPooledDatabase, listenersOn, strangerCaFile, type PooledDatabase } from '../support/pooled-database.js';
import { deleteWorkQueue, requireEnv } from '../support/services.js';
import { startTcpRelay, startTlsTerminator, type TlsTerminator } from '../support/tls-terminator.js';
import { until } from '../support/until.js';
import { RabbitQueue } from '../../infra/queue/rabbitmq.js';
import { createLogger } from '../../infra/logging/logger.js';

// PostgreSQL as a platform team runs a managed one: TLS checked against its
// CA (verify-full), a migration user that owns the schema and a runtime
// user that only reads and writes rows, the platform's processes through a
// transaction-pooling PgBouncer (scripts/services/pgbouncer.sh), and the
// change feed on a direct connection of its own, or off. RabbitMQ over
// amqps with a CA file: the broker's own TLS listener for the client's
// checks, and a TLS terminator in front of the broker for the processes,
// since it counts the sessions that came through it.

const START_MS = 120_000;

/** The runtime user through the pooler, as the processes connect, from this test process. */
function pooledDb(target: PooledDatabase, ca = fs.readFileSync(target.caFile, 'utf8')): Db {
  return createDatabase({ url: target.pooledUrl, ca, pooler: 'transaction', listen: 'off', poolMax: 2 });
}

/** The error a statement fails with, or undefined. */
async function failureOf(statement: Promise<unknown>): Promise<{ code?: string; message: string } | undefined> {
  try {
    await statement;
    return undefined;
  } catch (error) {
    return error as { code?: string; message: string };
  }
}

interface Processes {
  auth: Client;
  private: Client;
  public: Client;
  publicUrl: string;
  close(): Promise<void>;
}

/** The shared broker's URL through the terminator: amqps://, its port. */
function amqpsUrl(broker: TlsTerminator): string {
  const url = new URL(requireEnv('TEST_AMQP_URL', 'rabbitmq'));
  url.protocol = 'amqps:';
  url.port = String(broker.port);
  return url.toString();
}

/** Every server in one process and an executor in another, on the runtime user through PgBouncer, the broker over amqps. */
async function startProcesses(target: PooledDatabase, broker: TlsTerminator, listen: Record<string, string>): Promise<Processes> {
  const amqpUrl = requireEnv('TEST_AMQP_URL', 'rabbitmq');
  const queue = unique('dy-pooler');
  const keyDir = fs.mkdtempSync(path.join(os.tmpdir(), 'didyma-pooler-keys-'));
  const signingKey = path.join(keyDir, 'jwt-private.pem');
  fs.writeFileSync(signingKey, testKeys.privateKey!.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
  const [auth, priv, pub, executorPort] = (await freePorts(4)) as [number, number, number, number];
  const common = {
    DATABASE_URL: target.pooledUrl,
    DATABASE_POOLER: 'transaction',
    DATABASE_CA_FILE: target.caFile,
    DIDYMA_AMQP_URL: amqpsUrl(broker),
    DIDYMA_AMQP_CA_FILE: broker.caFile,
    DIDYMA_QUEUE_NAME: queue,
    DIDYMA_SECRET_KEY_FILE: testSecretKeyFile,
    DIDYMA_FILESYSTEM_STORAGE: 'true',
    ...listen,
  };
  const children: ManagedProcess[] = [
    didymaProcess('servers', ['serve', 'all'], {
      ...common,
      DIDYMA_AUTH_PORT: String(auth),
      DIDYMA_PRIVATE_PORT: String(priv),
      DIDYMA_PUBLIC_PORT: String(pub),
      DIDYMA_JWT_PRIVATE_KEY_FILE: signingKey,
      DIDYMA_JWT_PUBLIC_KEY_FILE: '',
    }),
    didymaProcess('executor', ['executor'], { ...common, DIDYMA_EXECUTOR_PORT: String(executorPort) }),
  ];
  const close = async () => {
    await Promise.all(children.map((child) => child.stop()));
    await deleteWorkQueue(amqpUrl, queue);
    fs.rmSync(keyDir, { recursive: true, force: true });
  };
  const url = (port: number) => `http://127.0.0.1:${port}`;
  try {
    for (const port of [auth, priv, pub]) await children[0]!.waitReady(`${url(port)}/readyz`, START_MS);
    await children[1]!.waitReady(`${url(executorPort)}/readyz`, START_MS);
  } catch (error) {
    await close();
    throw error;
  }
  return { auth: new Client(url(auth)), private: new Client(url(priv)), public: new Client(url(pub)), publicUrl: url(pub), close };
}

/**
 * A user and workspace written through the pooler by this process; the user
 * logs in on the auth server process, registers iris on the private one and
 * opens a session on the public one.
 */
async function irisTenant(db: Db, run: Processes, demoUrl: string, version: string) {
  const email = `${unique('user')}@example.test`;
  const user = await createUser(db, { email, password: PASSWORD });
  const ws = await createWorkspace(db, unique('ws'));
  await addMember(db, email, ws.name, 'supervisor');
  const { access: token } = await login(run.auth, { id: user.id, email, password: PASSWORD }, ws.name);
  await demoDeployment(run.private, token, demoUrl);
  const card = await upload(run.private, token, await filesystemStorage(run.private, token), '# Iris');
  const registered = await run.private.post('/api/platform_model', { token, json: modelPayload('iris-classifier', version, card.file_id) });
  expect(registered.status, registered.text).to.equal(201);
  const modelPath = `/api/model/iris-classifier/version/${version}`;
  const opened = await run.public.post(`${modelPath}/session`, { token });
  expect(opened.status, opened.text).to.equal(201);
  return { userId: user.id, token, modelPath, sessionId: opened.body.id as string };
}

/** A prediction queued on the public server, run by the executor process, seen COMPLETED on an event stream of the session. */
async function predictionOnStream(run: Processes, tenant: Awaited<ReturnType<typeof irisTenant>>): Promise<void> {
  const stream = await openEventStream(`${run.publicUrl}${tenant.modelPath}/session/${tenant.sessionId}/events`, tenant.token);
  try {
    expect(stream.response.status).to.equal(200);
    // With Idempotency-Keys, whose hot statements are prepared ones: each of them again must meet whichever server connection the pooler lends.
    const post = (key: string) =>
      run.public.post(`${tenant.modelPath}/session/${tenant.sessionId}/invocation`, {
        token: tenant.token,
        json: { type: 'PREDICT', request: { type: 'FEATURES', body: IRIS } },
        headers: { 'idempotency-key': key },
      });
    const keys = Array.from({ length: 6 }, () => unique('key'));
    const posted = await Promise.all(keys.map(post));
    for (const reply of posted) expect(reply.status, reply.text).to.equal(201);
    const again = await Promise.all(keys.map(post));
    expect(again.map((reply) => reply.body.id)).to.deep.equal(posted.map((reply) => reply.body.id));
    for (const reply of posted) {
      await until(async () => statusesOf(stream.received, reply.body.id as string).includes('COMPLETED'), 'the stream to see each prediction complete', 60_000);
    }
  } finally {
    await stream.close();
  }
}

/** The user deactivated by another process: the public server, which cached it, refuses its token once the change reaches it. */
async function refusedOnceDeactivated(db: Db, run: Processes, tenant: Awaited<ReturnType<typeof irisTenant>>): Promise<void> {
  expect((await run.public.get('/api/model', { token: tenant.token })).status).to.equal(200);
  await db('users').where({ id: tenant.userId }).update({ is_active: false });
  // The cache keeps an entry a minute at most: a notification that never came would leave the token working well past this wait.
  await until(async () => (await run.public.get('/api/model', { token: tenant.token })).status === 401, 'the public server to refuse a deactivated user', 20_000);
}

describe('PostgreSQL as a team runs it: TLS, a migration user, a runtime user through a transaction-pooling PgBouncer', function () {
  this.timeout(600_000);
  let target: PooledDatabase;
  let db: Db;
  let demo: Awaited<ReturnType<typeof startDemoModelServer>>;
  let broker: TlsTerminator;
  const version = unique('v');

  before(async () => {
    target = await createPooledDatabase();
    const migrate = didymaProcess('migrate', ['migrate'], {
      DATABASE_URL: target.pooledUrl,
      DATABASE_POOLER: 'transaction',
      DATABASE_LISTEN: 'off',
      DATABASE_MIGRATION_URL: target.migrationUrl,
      DATABASE_RUNTIME_ROLE: new URL(target.directUrl).username,
      DATABASE_CA_FILE: target.caFile,
    });
    const ended = await exitOf(migrate, START_MS);
    expect(ended.code, migrate.tail()).to.equal(0);
    expect(migrate.tail()).to.include('granted to didyma_runtime');
    db = pooledDb(target);
    demo = await startDemoModelServer(version);
    const amqp = new URL(requireEnv('TEST_AMQP_URL', 'rabbitmq'));
    broker = await startTlsTerminator({ host: amqp.hostname, port: Number(amqp.port) });
  });

  after(async () => {
    await broker?.close();
    await demo?.close();
    await db?.destroy();
    await target?.drop();
  });

  it('gives the runtime user rows but no DDL: it cannot CREATE, ALTER or DROP a table', async () => {
    const tables = (await db.raw(`select count(*)::int as n from pg_tables where schemaname = 'public' and tableowner = 'didyma_migrator'`)) as { rows: Array<{ n: number }> };
    expect(tables.rows[0]!.n, 'tables the migration user owns').to.be.greaterThan(20);
    expect(await db('workspaces').count({ n: '*' }).first()).to.deep.equal({ n: 0 });
    for (const statement of ['create table intruder (id int)', 'alter table users add column intruder int', 'drop table users', 'create index intruder on users (email)', 'truncate workspaces']) {
      const failure = await failureOf(db.raw(statement));
      expect(failure?.code, statement).to.equal('42501');
    }
    expect(await db('users').count({ n: '*' }).first(), 'users, after the attempts').to.deep.equal({ n: 0 });
  });

  it('refuses a server whose certificate another CA signed, or names another host, directly and through the pooler (verify-full)', async () => {
    const stranger = fs.readFileSync(strangerCaFile(), 'utf8');
    const refusal = async (url: string, ca: string) => {
      const other = createDatabase({ url, ca, pooler: 'transaction', listen: 'off', poolMax: 1 });
      try {
        return (await failureOf(other.raw('select 1')))?.message;
      } finally {
        await other.destroy();
      }
    };
    for (const url of [target.directUrl, target.pooledUrl]) {
      expect(await refusal(url, stranger), url).to.match(/self[- ]signed certificate|unable to verify/i);
      // The right CA, the same server reached as 127.0.0.2, which its certificate does not name.
      const elsewhere = await startTcpRelay('127.0.0.2', { host: new URL(url).hostname, port: Number(new URL(url).port) });
      try {
        const renamed = new URL(url);
        renamed.hostname = '127.0.0.2';
        renamed.port = String(elsewhere.port);
        expect(await refusal(renamed.toString(), fs.readFileSync(target.caFile, 'utf8')), url).to.match(/does not match certificate|altnames/i);
      } finally {
        await elsewhere.close();
      }
    }
    expect(await refusal(target.pooledUrl, fs.readFileSync(target.caFile, 'utf8')), 'the right CA and name').to.equal(undefined);
  });

  describe('with the change feed on a direct LISTEN connection', () => {
    let run: Processes;
    before(async () => {
      run = await startProcesses(target, broker, { DATABASE_LISTEN_URL: target.directUrl });
    });
    after(async () => run?.close());

    it('logs in, registers, runs a prediction through the queue, streams it, and follows another process’s change', async () => {
      // One LISTEN per process (servers, executor), as the runtime user over TLS, none through the pooler.
      await until(async () => (await listenersOn(target.name)).length === 2, 'both processes to listen', 30_000);
      expect(await listenersOn(target.name)).to.deep.equal([
        { usename: 'didyma_runtime', ssl: true },
        { usename: 'didyma_runtime', ssl: true },
      ]);
      const tenant = await irisTenant(db, run, demo.url, version);
      const before = broker.sessions();
      await predictionOnStream(run, tenant);
      expect(broker.sessions() - before, 'the public server’s wake-up connection, over amqps').to.be.greaterThan(0);
      await refusedOnceDeactivated(db, run, tenant);
    });
  });

  it('reaches RabbitMQ’s own TLS listener over amqps with its CA file, and refuses it with another CA', async () => {
    const logger = createLogger('silent');
    const queue = unique('dy-amqps');
    const url = requireEnv('TEST_AMQPS_URL', 'rabbitmq');
    const trusted = new RabbitQueue({ url, queue, logger, ca: fs.readFileSync(requireEnv('TEST_AMQP_CA_FILE', 'rabbitmq'), 'utf8') });
    const wrong = new RabbitQueue({ url, queue, logger, ca: fs.readFileSync(strangerCaFile(), 'utf8') });
    try {
      const rings: number[] = [];
      await trusted.listen((ring) => rings.push(ring.count));
      await until(async () => trusted.healthy(), 'the amqps connection', 30_000);
      trusted.ring({ count: 3, hops: 0 });
      await until(async () => rings.includes(3), 'the wake-up through amqps', 30_000);
      const failure = await failureOf(wrong.open());
      expect(failure?.message).to.match(/self[- ]signed certificate|unable to verify|certificate/i);
    } finally {
      await Promise.all([trusted.close(), wrong.close()]);
      await deleteWorkQueue(requireEnv('TEST_AMQP_URL', 'rabbitmq'), queue);
    }
  });

  describe('with no LISTEN at all', () => {
    let run: Processes;
    before(async () => {
      run = await startProcesses(target, broker, { DATABASE_LISTEN: 'off' });
    });
    after(async () => run?.close());

    it('still streams the prediction and refuses a deactivated user: the followers poll', async () => {
      const otherVersion = unique('v');
      const other = await startDemoModelServer(otherVersion);
      try {
        const tenant = await irisTenant(db, run, other.url, otherVersion);
        expect(await listenersOn(target.name)).to.deep.equal([]);
        await predictionOnStream(run, tenant);
        await refusedOnceDeactivated(db, run, tenant);
      } finally {
        await other.close();
      }
    });
  });
});
