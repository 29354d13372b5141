import { expect } from 'chai';
import { startTestPlatform, unique, type TestPlatform } from '../support/platform.js';
import { sharedDatabaseUrl } from '../support/database.js';
import { floodTenant, type FloodTenant } from '../support/flood.js';
import { deleteWorkQueue, requireEnv } from '../support/services.js';
import { didymaProcess, exitOf } from '../support/didyma-process.js';
import { freePorts, type ManagedProcess } from '../support/model-servers.js';
import { openEventStream, statusesOf, type SentEvent } from '../support/event-stream-client.js';
import { until } from '../support/until.js';
import { startExecutor } from '../../executor/start.js';

// A session's event stream served by a public server in a process of its own,
// told to stop as Kubernetes tells it while invocations run: the client gets
// the events up to the end and a clean end of the answer, resumes with
// Last-Event-ID on another server, and loses no event and sees none twice.

/** The server pod's termination grace period (charts/didyma). */
const SERVER_POD_GRACE_MS = 30_000;
const INVOCATIONS = 40;

describe('event streams against a public server process: drained by SIGTERM, resumed elsewhere', function () {
  this.timeout(240_000);
  let t: TestPlatform;
  let executor: Awaited<ReturnType<typeof startExecutor>>;
  let server: ManagedProcess;
  let tenant: FloodTenant;
  let publicUrl: string;
  let queueName: string;
  let amqpUrl: string;

  before(async () => {
    amqpUrl = requireEnv('TEST_AMQP_URL', 'rabbitmq');
    queueName = unique('dy-drain');
    t = await startTestPlatform({ amqpUrl, queueName, executorConcurrency: 1 });
    executor = await startExecutor(t.platform);
    tenant = await floodTenant(t, 50);
    const [port] = await freePorts(1);
    server = didymaProcess('public', ['serve', 'public'], {
      DATABASE_URL: await sharedDatabaseUrl(),
      DIDYMA_AMQP_URL: amqpUrl,
      DIDYMA_QUEUE_NAME: queueName,
      DIDYMA_PUBLIC_PORT: String(port),
      DIDYMA_SHUTDOWN_DRAIN_SECONDS: '3',
      DIDYMA_SHUTDOWN_GRACE_SECONDS: '25',
    });
    publicUrl = `http://127.0.0.1:${port}`;
    await server.waitReady(`${publicUrl}/readyz`, 60_000);
  });

  after(async () => {
    await server?.stop(0);
    await executor?.close();
    await tenant?.demo.close();
    await t?.close();
    if (queueName) await deleteWorkQueue(amqpUrl, queueName);
  });

  const eventsPath = () => `/api/model/iris-classifier/version/${tenant.version}/session/${tenant.sessionId}/events`;
  const completed = (received: SentEvent[]) => received.filter((sent) => sent.data.status === 'COMPLETED').length;

  it('ends the stream cleanly on SIGTERM, and the stream resumed on another server holds every event once', async () => {
    const first = await openEventStream(`${publicUrl}${eventsPath()}`, tenant.token);
    const ids = await tenant.invoke(INVOCATIONS);
    // One call at a time of 50 ms: the server stops with most of them still to run.
    await until(async () => completed(first.received) >= 3, 'the first completions on the stream', 60_000);

    server.child.kill('SIGTERM');
    await until(async () => first.ended(), 'the stream to end', SERVER_POD_GRACE_MS);
    expect(first.endedCleanly(), 'the server ended the answer').to.equal(true);
    expect(completed(first.received), 'completions left to run when the stream ended').to.be.below(INVOCATIONS);
    expect(await exitOf(server, SERVER_POD_GRACE_MS), `the server's exit:\n${server.tail()}`).to.deep.equal({ code: 0, signal: null });

    const second = await openEventStream(`${t.public.baseUrl}${eventsPath()}`, tenant.token, first.lastId());
    try {
      await until(async () => completed(first.received) + completed(second.received) === INVOCATIONS, 'every completion on one stream or the other', 60_000);
      const all = [...first.received, ...second.received];
      for (const id of ids) expect(statusesOf(all, id), id).to.deep.equal(['QUEUED', 'IN_PROGRESS', 'COMPLETED']);
    } finally {
      await second.close();
    }
  });
});
