import http from 'node:http';
import { expect } from 'chai';
import { unique, type TestPlatform } from '../support/platform.js';
import { IRIS, registeredIris, startDemoModelServer, type Tenant } from '../support/fixtures.js';
import { until } from '../support/until.js';
import { freePorts, inferenceKey, type CountingModelServer } from '../support/model-servers.js';
import { exitOf } from '../support/didyma-process.js';
import type { InvocationAudit } from '../support/invocation-audit.js';
import { AuditedRun } from '../support/audited-run.js';

// SIGTERM, as Kubernetes sends it before a pod goes, to real `didyma`
// processes under load: a server must answer every request it took, say it
// is not ready, close each connection after its answer and exit 0 before its
// pod's grace period ends; an executor must finish and record the runs it
// holds (cli.md: "an executor finishes the invocations it holds"), exit 0,
// and leave the queued rest to another executor, nothing lost or run twice.

/** The pods' termination grace periods (charts/didyma): Kubernetes kills the process after them. */
const SERVER_POD_GRACE_MS = 30_000;
const EXECUTOR_POD_GRACE_MS = 120_000;
/** Bounds of the other waits: generous, the machine may be slow and shared. */
const WAIT_MS = 180_000;

type Outcome = { status: number; id?: string; close: boolean; reused: boolean; closed: Promise<boolean> } | { error: string };

/** Each socket's end: whether it closed with an error. */
const socketEnds = new WeakMap<object, Promise<boolean>>();

/** One request on `agent`: its status, body id and whether the answer closes the connection; or the error that cut it. */
function send(agent: http.Agent | false, url: string, options: { method?: string; token?: string; json?: unknown } = {}): Promise<Outcome> {
  return new Promise((resolve) => {
    const body = options.json === undefined ? undefined : JSON.stringify(options.json);
    const request = http.request(url, {
      agent,
      method: options.method ?? 'GET',
      headers: { ...(options.token ? { authorization: `Bearer ${options.token}` } : {}), ...(body ? { 'content-type': 'application/json' } : {}) },
    });
    request.once('error', (error: NodeJS.ErrnoException) => resolve({ error: error.code ?? error.message }));
    request.once('socket', (socket) => {
      if (!socketEnds.has(socket)) socketEnds.set(socket, new Promise((closed) => socket.once('close', closed)));
    });
    request.once('response', (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.once('error', (error: NodeJS.ErrnoException) => resolve({ error: error.code ?? error.message }));
      response.once('end', () => {
        let id: string | undefined;
        try {
          id = (JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id?: string }).id;
        } catch {
          // not JSON: the status tells
        }
        resolve({ status: response.statusCode ?? 0, id, close: response.headers.connection === 'close', reused: request.reusedSocket, closed: socketEnds.get(request.socket!)! });
      });
    });
    request.end(body);
  });
}

describe('SIGTERM to didyma processes under load (real PostgreSQL and RabbitMQ)', function () {
  this.timeout(600_000);
  let run: AuditedRun;
  let t: TestPlatform;
  let owner: Tenant;
  let model: CountingModelServer;
  let audit: InvocationAudit;
  let queueName: string;
  const base = () => run.base();

  before(async () => {
    // Slow: an executor holds model calls in flight when it is told to stop.
    run = await AuditedRun.start('term', 1_000);
    ({ t, owner, model, audit, queueName } = run);
  });

  after(() => run?.close([`${queueName}-serve`]));

  const didyma = (name: string, args: string[], env: Record<string, string>, queue?: string) => run.spawn(name, args, env, queue);

  const statusesOf = async (ids: string[]) => (await t.platform.db('invocations').whereIn('id', ids).select('id', 'status')) as Array<{ id: string; status: string }>;

  it('a server answers every request it took, turns unready, closes each connection after its answer and exits 0 within its grace period', async () => {
    // A model and a queue of its own, which no executor reads: this load only queues work.
    const serveVersion = unique('serve');
    const served = `/api/model/iris-classifier/version/${serveVersion}`;
    const fast = await startDemoModelServer(serveVersion);
    await registeredIris(t, owner, fast.url, serveVersion);
    const [port] = (await freePorts(1)) as [number];
    const url = `http://127.0.0.1:${port}`;
    // The drain's bound, short: a prober keeps requests coming all along, as a kubelet would.
    const server = didyma('public', ['serve', 'public'], { DIDYMA_PUBLIC_PORT: String(port), DIDYMA_SHUTDOWN_DRAIN_SECONDS: '3', DIDYMA_SHUTDOWN_GRACE_SECONDS: '25' }, `${queueName}-serve`);
    await server.waitReady(`${url}/readyz`, WAIT_MS);
    const invocations = `${url}${served}/session`;

    // Sixteen clients, each on a keep-alive connection of its own, back to back until an answer says the connection closes.
    const outcomes: Outcome[][] = [];
    const closedWithError: boolean[] = [];
    const clients = Array.from({ length: 16 }, async (_, index) => {
      const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
      const mine: Outcome[] = (outcomes[index] = []);
      const session = await send(agent, invocations, { method: 'POST', token: owner.token });
      mine.push(session);
      if (!('status' in session) || session.status !== 201) return;
      for (;;) {
        const reply = await send(agent, `${invocations}/${session.id}/invocation`, { method: 'POST', token: owner.token, json: { type: 'PREDICT', request: { type: 'FEATURES', body: IRIS } } });
        mine.push(reply);
        if (!('status' in reply)) return;
        if (reply.close) {
          // The server ends the connection after that answer: wait until it is gone, and see how.
          closedWithError[index] = await reply.closed;
          agent.destroy();
          return;
        }
      }
    });
    const answered = () => outcomes.reduce((sum, mine) => sum + mine.filter((o) => 'status' in o).length, 0);
    await until(async () => outcomes.filter((mine) => mine.some((o) => 'reused' in o && o.reused)).length === 16 && answered() > 200, 'every client to send on a kept-alive connection', WAIT_MS);

    // A readiness prober on fresh connections, until the server no longer takes them.
    const probes: Outcome[] = [];
    const prober = (async () => {
      for (;;) {
        const probe = await send(false, `${url}/readyz`);
        probes.push(probe);
        if (!('status' in probe)) return;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    })();
    await until(async () => probes.some((p) => 'status' in p && p.status === 200), 'the prober to see the server ready', WAIT_MS);

    server.child.kill('SIGTERM');
    const exit = await exitOf(server, SERVER_POD_GRACE_MS);
    await Promise.all(clients);
    await prober;

    expect(exit, `the server's exit:\n${server.tail()}`).to.deep.equal({ code: 0, signal: null });
    const all = outcomes.flat();
    expect(all.filter((o) => !('status' in o)), 'requests without a complete answer').to.deep.equal([]);
    expect(all.map((o) => ('status' in o ? o.status : 0)).filter((status) => status !== 201), 'answers other than 201').to.deep.equal([]);
    expect(outcomes.map((mine) => mine.at(-1)).map((last) => Boolean(last && 'close' in last && last.close)), "each client's last answer closes its connection").to.deep.equal(Array(16).fill(true));
    expect(closedWithError, 'connections closed with an error').to.deep.equal(Array(16).fill(false));
    // Readiness: ready, then 503 from the first answer of the drain on, until the listener closes.
    const statuses = probes.map((p) => ('status' in p ? p.status : p.error));
    const firstUnready = statuses.indexOf(503);
    expect(firstUnready, `readiness never 503: ${statuses.join(' ')}`).to.be.greaterThan(0);
    expect(statuses.slice(0, firstUnready).every((s) => s === 200), `ready before the drain: ${statuses.join(' ')}`).to.equal(true);
    expect(statuses.slice(firstUnready, -1).every((s) => s === 503), `unready through the drain: ${statuses.join(' ')}`).to.equal(true);
    expect(['ECONNREFUSED', 'ECONNRESET'], `the prober's last attempt: ${statuses.join(' ')}`).to.include(statuses.at(-1));
    // Nothing accepted was lost: every invocation answered 201 is in the database.
    const ids = outcomes.flatMap((mine) => mine.slice(1)).flatMap((o) => ('id' in o && o.id ? [o.id] : []));
    expect((await statusesOf(ids)).length, 'accepted invocations in the database').to.equal(ids.length);
    // Its queued work ends with its model, out of the next test's way.
    expect((await t.private.delete(`/api/platform_model/iris-classifier/version/${serveVersion}`, { token: owner.token })).status).to.equal(204);
    await fast.close();
    console.log(`      ${answered()} requests answered on 16 keep-alive connections, ${probes.length} readiness probes, exit 0`);
  });

  it('an executor finishes and records the runs it holds, exits 0, and another takes the rest: nothing lost, nothing run twice', async () => {
    const TOTAL = 48;
    const CONCURRENCY = 4;
    const executor = (name: string) => didyma(name, ['executor'], { DIDYMA_EXECUTOR_CONCURRENCY: String(CONCURRENCY), DIDYMA_EXECUTOR_PORT: '0', DIDYMA_SWEEP_INTERVAL_MS: '200' });
    const session = (await t.public.post(`${base()}/session`, { token: owner.token })).body.id as string;
    const accepted = new Map<string, string>();
    for (let i = 0; i < TOTAL; i++) {
      const flower = { sepal_length: 4 + i / 100, sepal_width: 3.5, petal_length: 1.4, petal_width: 0.2 };
      const reply = await t.public.post(`${base()}/session/${session}/invocation`, { token: owner.token, json: { type: 'PREDICT', request: { type: 'FEATURES', body: JSON.stringify(flower) } } });
      expect(reply.status, reply.text).to.equal(201);
      accepted.set(reply.body.id as string, inferenceKey(flower));
    }

    const first = executor('first');
    await until(async () => (await audit.heldBy('first')).size > CONCURRENCY && model.inProgress() === CONCURRENCY, 'the first executor to hold runs with model calls in flight', WAIT_MS);
    const callsInFlight = model.inProgress();
    const heldAtSignal = await audit.heldBy('first');
    first.child.kill('SIGTERM');
    const exit = await exitOf(first, EXECUTOR_POD_GRACE_MS);
    expect(exit, `the first executor's exit:\n${first.tail()}`).to.deep.equal({ code: 0, signal: null });

    // Everything it held, its calls in flight included, it finished and recorded itself: nothing released, nothing left running.
    expect(await audit.heldBy('first'), 'runs the first executor left unfinished').to.have.property('size', 0);
    const finals = await audit.finals();
    const byFirst = [...finals].filter(([, writes]) => writes.some((w) => w.writer === 'first')).map(([id]) => id);
    expect(byFirst, 'the runs it held when told to stop, finished by it').to.include.members([...heldAtSignal.keys()]);
    const left = (await statusesOf([...accepted.keys()])).filter((row) => row.status === 'QUEUED');
    expect(left.length, 'invocations left queued for another executor').to.be.greaterThan(0);

    const second = executor('second');
    await until(async () => (await statusesOf([...accepted.keys()])).every((row) => row.status === 'COMPLETED'), 'the second executor to finish the rest', WAIT_MS);
    second.child.kill('SIGTERM');
    expect(await exitOf(second, EXECUTOR_POD_GRACE_MS), `the second executor's exit:\n${second.tail()}`).to.deep.equal({ code: 0, signal: null });

    expect(await audit.staleWrites(), 'writes under a stale lease').to.deep.equal([]);
    const finalsAfter = await audit.finals();
    const notOnce = [...accepted.keys()].filter((id) => finalsAfter.get(id)?.length !== 1);
    expect(notOnce, 'invocations not finished exactly once').to.deep.equal([]);
    const claims = await audit.claims();
    const writers = [...accepted.keys()].map((id) => (claims.get(id) ?? []).map((claim) => claim.writer).join(','));
    expect(writers.filter((w) => w !== 'first' && w !== 'second'), 'invocations not claimed exactly once').to.deep.equal([]);
    expect(writers.filter((w) => w === 'second').length, 'the rest, run by the second executor').to.equal(left.length);
    const calls = [...accepted].map(([id, key]) => ({ id, calls: model.calls(key) })).filter((c) => c.calls !== 1);
    expect(calls, 'invocations whose model was not called exactly once').to.deep.equal([]);
    console.log(`      SIGTERM with ${callsInFlight} model calls in flight and ${heldAtSignal.size} runs held: ${byFirst.length} finished by it, ${left.length} by the next executor, each once`);
  });
});
