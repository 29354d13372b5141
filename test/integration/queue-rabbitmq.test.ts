import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import amqp from 'amqplib';
import pino from 'pino';
import net from 'node:net';
import { RabbitQueue, wakeupQueueOf } from '../../infra/queue/rabbitmq.js';
import { startExecutor } from '../../executor/start.js';
import { startTestPlatform, testSecretKeyFile, unique, type TestPlatform } from '../support/platform.js';
import { sharedDatabaseUrl } from '../support/database.js';
import { demoDeployment, filesystemStorage, IRIS, modelPayload, startDemoModelServer, tenant, upload, type Tenant } from '../support/fixtures.js';
import { deleteWorkQueue, requireEnv, serviceScript } from '../support/services.js';
import { createDemoModelServer } from '../../demo/model-server/server.js';
import { DEFAULT_RETRY_POLICY } from '../../features/models/retry-policy.js';

const silent = pino({ level: 'silent' });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until(check: () => Promise<boolean>, what: string, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await sleep(100);
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe('RabbitMQ wake-ups (real broker)', function () {
  this.timeout(180_000);
  let url: string;
  before(() => {
    url = requireEnv('TEST_AMQP_URL', 'rabbitmq');
  });

  const queues: string[] = [];
  const testQueue = () => {
    const name = unique('dy-test');
    queues.push(name);
    return name;
  };
  after(async () => {
    for (const name of queues) await deleteWorkQueue(url, name);
  });

  it('gives each wake-up to one listener, in turn, with the runs it counts', async () => {
    const name = testQueue();
    const queue = new RabbitQueue({ url, queue: name, logger: silent });
    const heard: Array<{ listener: string; count: number }> = [];
    await queue.listen((ring) => heard.push({ listener: 'a', count: ring.count }));
    await queue.listen((ring) => heard.push({ listener: 'b', count: ring.count }));
    for (const count of [1, 2, 3, 4]) queue.ring({ count, hops: 0 });
    await until(async () => heard.length === 4, 'four wake-ups');
    expect(heard.map((h) => h.count).sort()).to.deep.equal([1, 2, 3, 4]);
    expect(heard.filter((h) => h.listener === 'a')).to.have.length(2);
    expect(queue.healthy()).to.equal(true);
    await queue.close();
  });

  it('keeps a bounded number of wake-ups while no executor listens', async () => {
    const name = testQueue();
    const queue = new RabbitQueue({ url, queue: name, logger: silent });
    await queue.open();
    for (let i = 0; i < 1_200; i++) queue.ring({ count: 1, hops: 0 });
    const connection = await amqp.connect(url);
    try {
      const channel = await connection.createChannel();
      await until(async () => (await channel.checkQueue(wakeupQueueOf(name))).messageCount === 1_000, 'the bound');
      await sleep(200);
      expect((await channel.checkQueue(wakeupQueueOf(name))).messageCount).to.equal(1_000);
    } finally {
      await connection.close();
      await queue.close();
    }
  });

  it('subscribes once the broker becomes reachable when it was not at listen()', async () => {
    const broker = new URL(url);
    // A port where nothing listens yet, then a relay to the broker on it.
    const relay = net.createServer((client) => {
      const upstream = net.connect(Number(broker.port), broker.hostname);
      client.pipe(upstream).pipe(client);
      client.on('error', () => upstream.destroy());
      upstream.on('error', () => client.destroy());
    });
    const port = await new Promise<number>((resolve) => relay.listen(0, '127.0.0.1', () => resolve((relay.address() as net.AddressInfo).port)));
    await new Promise((resolve) => relay.close(resolve));
    const late = new URL(url);
    late.host = `127.0.0.1:${port}`;
    const name = testQueue();
    const queue = new RabbitQueue({ url: late.toString(), queue: name, logger: silent, maxBackoffMs: 200 });
    const heard: number[] = [];
    await queue.listen((ring) => heard.push(ring.count));
    expect(queue.healthy()).to.equal(false);
    await new Promise<void>((resolve) => relay.listen(port, '127.0.0.1', resolve));
    try {
      await until(async () => queue.healthy(), 'the late connection');
      const publisher = new RabbitQueue({ url, queue: name, logger: silent });
      await publisher.open();
      publisher.ring({ count: 7, hops: 0 });
      await until(async () => heard.length === 1, 'the wake-up');
      expect(heard).to.deep.equal([7]);
      await publisher.close();
    } finally {
      await queue.close();
      relay.close();
    }
  });
});

describe('queued invocations over RabbitMQ: nothing lost, nothing run twice', function () {
  this.timeout(300_000);
  let t: TestPlatform;
  let owner: Tenant;
  let version: string;
  let demo: Awaited<ReturnType<typeof startDemoModelServer>>;
  let queueName: string;

  before(async () => {
    const amqpUrl = requireEnv('TEST_AMQP_URL', 'rabbitmq');
    queueName = unique('dy-invocations');
    t = await startTestPlatform({ amqpUrl, queueName, executorLeaseSeconds: 3 });
    version = unique('v');
    demo = await startDemoModelServer(version);
    owner = await tenant(t);
    await demoDeployment(t.private, owner.token, demo.url);
    const storage = await filesystemStorage(t.private, owner.token);
    const card = await upload(t.private, owner.token, storage, 'card');
    const reply = await t.private.post('/api/platform_model', { token: owner.token, json: modelPayload('iris-classifier', version, card.file_id) });
    expect(reply.status).to.equal(201);
  });
  after(async () => {
    if (!t) return;
    serviceScript('rabbitmq', 'start');
    await demo?.close();
    await t.close();
    await deleteWorkQueue(requireEnv('TEST_AMQP_URL', 'rabbitmq'), queueName);
  });

  const base = () => `/api/model/iris-classifier/version/${version}`;

  async function invokeMany(count: number) {
    const session = (await t.public.post(`${base()}/session`, { token: owner.token })).body.id;
    const ids: string[] = [];
    for (let i = 0; i < count; i++) {
      const reply = await t.public.post(`${base()}/session/${session}/invocation`, { token: owner.token, json: { type: 'PREDICT', request: { type: 'FEATURES', body: IRIS } } });
      expect(reply.status).to.equal(201);
      ids.push(reply.body.id);
    }
    return ids;
  }

  async function statuses(ids: string[]) {
    const rows = await t.platform.db('invocations').whereIn('id', ids).select('status');
    return rows.map((r: { status: string }) => r.status);
  }

  it('accepts and runs invocations while RabbitMQ is down, each exactly once: the broker only wakes executors', async () => {
    const executor = await startExecutor(t.platform);
    try {
      demo.resetStats();
      serviceScript('rabbitmq', 'stop');
      const ids = await invokeMany(30);
      // No wake-up reaches the executor: its poll claims them.
      await until(async () => (await statuses(ids)).every((s) => s === 'COMPLETED'), 'every invocation to complete with the broker down');
      serviceScript('rabbitmq', 'start');
      await until(async () => t.platform.queue.healthy(), 'the reconnection');
      const after = await invokeMany(5);
      await until(async () => (await statuses(after)).every((s) => s === 'COMPLETED'), 'the invocations after it returned');
      expect(demo.stats()[`iris-classifier:${version}`]).to.equal(35);
    } finally {
      await executor.close();
    }
  });

  it('recovers an invocation whose executor was killed mid-run, after its lease', async () => {
    const slowVersion = unique('slow');
    const slow = createDemoModelServer({ version: slowVersion, inferenceDelayMs: 3000 });
    const { url: slowUrl } = await slow.listen(0, '127.0.0.1');
    let child: ChildProcess | undefined;
    try {
      await demoDeployment(t.private, owner.token, slowUrl);
      const storage = await filesystemStorage(t.private, owner.token);
      const card = await upload(t.private, owner.token, storage, 'card');
      const registered = await t.private.post('/api/platform_model', { token: owner.token, json: modelPayload('iris-classifier', slowVersion, card.file_id) });
      expect(registered.status, registered.text).to.equal(201);
      child = spawn(process.execPath, ['--import', 'tsx', 'cli/entry.ts', 'executor'], {
        env: {
          ...process.env,
          DATABASE_URL: await sharedDatabaseUrl(),
          DIDYMA_AMQP_URL: requireEnv('TEST_AMQP_URL', 'rabbitmq'),
          DIDYMA_QUEUE_NAME: queueName,
          DIDYMA_SECRET_KEY_FILE: testSecretKeyFile,
          DIDYMA_DEV_MODE: 'true',
          DIDYMA_EXECUTOR_LEASE_SECONDS: '3',
          DIDYMA_EXECUTOR_PORT: '0',
          DIDYMA_LOG_LEVEL: 'warn',
          DIDYMA_DATA_DIR: t.dataDir,
        },
        stdio: 'ignore',
      });
      const path = `/api/model/iris-classifier/version/${slowVersion}`;
      const session = (await t.public.post(`${path}/session`, { token: owner.token })).body.id;
      const created = await t.public.post(`${path}/session/${session}/invocation`, { token: owner.token, json: { type: 'PREDICT', request: { type: 'FEATURES', body: IRIS } } });
      await until(async () => (await statuses([created.body.id]))[0] === 'IN_PROGRESS', 'the child executor to claim it');
      child.kill('SIGKILL');
      const executor = await startExecutor(t.platform);
      try {
        await until(async () => (await statuses([created.body.id]))[0] === 'COMPLETED', 'recovery after the lease');
        const row = await t.platform.db('invocations').where({ id: created.body.id }).first();
        expect(row.attempts).to.equal(2);
      } finally {
        await executor.close();
      }
    } finally {
      child?.kill('SIGKILL');
      await slow.close();
    }
  });

  it('marks a model server that stays down ERROR after bounded retries', async () => {
    const downVersion = unique('down');
    const gone = createDemoModelServer({ version: downVersion });
    const { url: goneUrl } = await gone.listen(0, '127.0.0.1');
    await demoDeployment(t.private, owner.token, goneUrl);
    const storage = await filesystemStorage(t.private, owner.token);
    const card = await upload(t.private, owner.token, storage, 'card');
    const registered = await t.private.post('/api/platform_model', { token: owner.token, json: modelPayload('iris-classifier', downVersion, card.file_id) });
    expect(registered.status, registered.text).to.equal(201);
    await gone.close();
    const executor = await startExecutor(t.platform);
    try {
      const path = `/api/model/iris-classifier/version/${downVersion}`;
      const session = (await t.public.post(`${path}/session`, { token: owner.token })).body.id;
      const created = await t.public.post(`${path}/session/${session}/invocation`, { token: owner.token, json: { type: 'PREDICT', request: { type: 'FEATURES', body: IRIS } } });
      await until(async () => (await statuses([created.body.id]))[0] === 'ERROR', 'ERROR after retries');
      const row = await t.platform.db('invocations').where({ id: created.body.id }).first();
      const { max_attempts } = DEFAULT_RETRY_POLICY;
      expect(row.error).to.match(new RegExp(`Failed after ${max_attempts} attempts`));
      expect(row.attempts).to.equal(max_attempts);
    } finally {
      await executor.close();
    }
  });
});
