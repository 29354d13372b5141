import http from 'node:http';
import net from 'node:net';
import { expect } from 'chai';
import { unique } from '../support/platform.js';
import { demoDeployment, IRIS, modelPayload, startDemoModelServer, filesystemStorage, upload } from '../support/fixtures.js';
import { until } from '../support/until.js';
import { freePorts } from '../support/model-servers.js';
import { exitOf } from '../support/didyma-process.js';
import { AuditedRun } from '../support/audited-run.js';
import { startSilentServer, type SilentServer } from '../support/silent-server.js';

// SIGTERM to real `didyma` processes while peers that never answer hold
// connections to them, inbound and outbound: the process still exits within
// DIDYMA_SHUTDOWN_GRACE_SECONDS, cleanly when what holds it is a socket, by
// its own hard exit (code 1, with a log line) when a run would outlast it.

/** Bounds of the other waits: generous, the machine may be slow and shared. */
const WAIT_MS = 180_000;

/** Whether the socket has closed, as seen from this side. */
function closed(socket: net.Socket): Promise<void> {
  return socket.destroyed ? Promise.resolve() : new Promise((resolve) => socket.once('close', () => resolve()));
}

describe('SIGTERM while peers never answer (real PostgreSQL and RabbitMQ)', function () {
  this.timeout(600_000);
  let run: AuditedRun;
  let silent: SilentServer;

  before(async () => {
    run = await AuditedRun.start('peers', 0);
    silent = await startSilentServer();
  });
  after(async () => {
    await silent?.close();
    await run?.close();
  });

  it('a server with a silent S3 endpoint, an idle and a half-sent connection exits 0 within its grace period and leaves no socket open', async () => {
    // Connections are cut 3 s before its end (the most the platform leaves itself for closing): time enough on a loaded host.
    const GRACE_SECONDS = 12;
    const [port] = (await freePorts(1)) as [number];
    const url = `http://127.0.0.1:${port}`;
    // The storage check would wait two minutes for the endpoint's answer: only the shutdown can end it.
    const server = run.spawn('private', ['serve', 'private'], {
      DIDYMA_PRIVATE_PORT: String(port),
      DIDYMA_SHUTDOWN_DRAIN_SECONDS: '1',
      DIDYMA_SHUTDOWN_GRACE_SECONDS: String(GRACE_SECONDS),
      DIDYMA_STORAGE_HEADERS_TIMEOUT_MS: '120000',
    });
    await server.waitReady(`${url}/readyz`, WAIT_MS);

    // Inbound: a connection that never sends a byte, and one that stops half-way through its headers.
    const idle = net.connect(port, '127.0.0.1');
    const half = net.connect(port, '127.0.0.1', () => half.write(`GET /api/storage HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n`));
    for (const socket of [idle, half]) socket.on('error', () => undefined);
    // Outbound: a storage registration whose check waits on the silent S3 endpoint.
    const accepted = silent.accepted();
    const registration = new Promise<string>((resolve) => {
      const body = JSON.stringify({ storage_key: unique('s3'), storage_class: 'didyma.storage.S3Storage', connector_init: { access_key: 'ak', secret_key: 'sk', endpoint: silent.url, bucket_name: 'files' } });
      const request = http.request(`${url}/api/storage`, { method: 'POST', headers: { authorization: `Bearer ${run.owner.token}`, 'content-type': 'application/json' } }, (response) => {
        response.resume();
        response.on('end', () => resolve(`HTTP ${response.statusCode}`));
      });
      request.on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
      request.end(body);
    });
    await accepted;
    expect(await silent.connections(), 'connections of the check to the silent endpoint').to.equal(1);

    const signalled = Date.now();
    server.child.kill('SIGTERM');
    const exit = await exitOf(server, GRACE_SECONDS * 1000 + 10_000);
    const took = Date.now() - signalled;
    expect(exit, `the server's exit:\n${server.tail()}`).to.deep.equal({ code: 0, signal: null });
    expect(took, 'milliseconds from SIGTERM to exit').to.be.below(GRACE_SECONDS * 1000);
    // The cut request's audit record went in before the database closed.
    expect(server.tail()).not.to.include('could not write an audit record');
    // The registration's connection was cut at the end of the grace period: no answer, and nothing left open anywhere.
    expect(await registration).to.be.oneOf(['ECONNRESET', 'socket hang up']);
    await Promise.all([closed(idle), closed(half)]);
    await until(async () => (await silent.connections()) === 0, 'the connection to the silent endpoint to close', 5_000);
    console.log(`      SIGTERM with a silent S3 endpoint, an idle and a half-sent connection: exit 0 after ${took} ms (grace ${GRACE_SECONDS} s)`);
  });

  it('an executor whose model call never returns exits at its grace deadline with a log line, and the run is queued again', async () => {
    const GRACE_SECONDS = 3;
    // A model whose registry answers and whose server is the silent peer.
    const version = unique('mute');
    const registry = await startDemoModelServer(version);
    try {
      await demoDeployment(run.t.private, run.owner.token, registry.url, unique('mute'), {}, silent.url);
      const card = await upload(run.t.private, run.owner.token, await filesystemStorage(run.t.private, run.owner.token), '# card');
      const registered = await run.t.private.post('/api/platform_model', { token: run.owner.token, json: modelPayload('iris-classifier', version, card.file_id) });
      expect(registered.status, registered.text).to.equal(201);
      const base = `/api/model/iris-classifier/version/${version}/session`;
      const session = (await run.t.public.post(base, { token: run.owner.token })).body.id as string;
      const created = await run.t.public.post(`${base}/${session}/invocation`, { token: run.owner.token, json: { type: 'PREDICT', request: { type: 'FEATURES', body: IRIS } } });
      expect(created.status, created.text).to.equal(201);

      const accepted = silent.accepted();
      const executor = run.spawn('stuck', ['executor'], {
        DIDYMA_EXECUTOR_PORT: '0',
        DIDYMA_EXECUTOR_LEASE_SECONDS: '3',
        DIDYMA_SHUTDOWN_GRACE_SECONDS: String(GRACE_SECONDS),
        // The model call would wait two minutes: the executor must not wait for it past its grace period.
        DIDYMA_UPSTREAM_TIMEOUT_MS: '120000',
      });
      await accepted;
      const signalled = Date.now();
      executor.child.kill('SIGTERM');
      const exit = await exitOf(executor, GRACE_SECONDS * 1000 + 10_000);
      const took = Date.now() - signalled;
      expect(exit, `the executor's exit:\n${executor.tail()}`).to.deep.equal({ code: 1, signal: null });
      expect(took, 'milliseconds from SIGTERM to exit').to.be.within(GRACE_SECONDS * 1000 - 100, GRACE_SECONDS * 1000 + 2_000);
      expect(executor.tail()).to.include('shutdown grace period over: exiting with work still open');
      // The line names what held the process: the executor, waiting on its model call.
      expect(executor.tail()).to.match(/"open":\[\{"step":"executor","ms":\d+\}\]/);
      await until(async () => (await silent.connections()) === 0, 'the connection to the silent model server to close', 5_000);
      // Its lease runs out and the run goes back to the queue for another executor: nothing is lost.
      const status = async () => ((await run.t.platform.db('invocations').where({ id: created.body.id }).first('status')) as { status: string }).status;
      await until(async () => (await status()) === 'QUEUED', 'the abandoned run to be queued again', 60_000);
      console.log(`      SIGTERM with a model call that never returns: exit 1 after ${took} ms (grace ${GRACE_SECONDS} s), the run queued again`);
      expect((await run.t.private.delete(`/api/platform_model/iris-classifier/version/${version}`, { token: run.owner.token })).status).to.equal(204);
    } finally {
      await registry.close();
    }
  });
});
