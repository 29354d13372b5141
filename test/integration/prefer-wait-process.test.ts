import { expect } from 'chai';
import { IRIS } from '../support/fixtures.js';
import { floodTenant, type FloodTenant } from '../support/flood.js';
import { exitOf } from '../support/didyma-process.js';
import { startPublicProcess, type PublicProcess } from '../support/public-process.js';
import { until } from '../support/until.js';

// `Prefer: wait` against a public server in a process of its own (PostgreSQL
// and RabbitMQ, as in production), told to stop as Kubernetes tells it: a
// request waiting for its invocation is answered at once (202, the invocation
// still running elsewhere), and the server exits 0 within its grace period.

/** The server pod's termination grace period (charts/didyma). */
const SERVER_POD_GRACE_MS = 30_000;
/** A model call that outlasts the test: the invocation runs all through the drain. */
const SLOW_MS = 120_000;

describe('Prefer: wait against a public server process: ended at once by SIGTERM', function () {
  this.timeout(240_000);
  let run: PublicProcess;
  let slow: FloodTenant;

  before(async () => {
    run = await startPublicProcess('dy-waits', {
      DIDYMA_MAX_PREFER_WAIT_SECONDS: '120',
      DIDYMA_SHUTDOWN_DRAIN_SECONDS: '3',
      DIDYMA_SHUTDOWN_GRACE_SECONDS: '25',
    });
    slow = await floodTenant(run.t, SLOW_MS);
    await run.server.waitReady(`${run.url}/readyz`, 60_000);
  });

  after(async () => {
    if (slow) await run.t.public.post(`/api/model/iris-classifier/version/${slow.version}/session/${slow.sessionId}/cancel`, { token: slow.token });
    await run?.close();
    await slow?.demo.close();
  });

  it('answers a waiting request 202 at once on SIGTERM, its invocation still running, and exits 0', async () => {
    const { t, server } = run;
    const answer = fetch(`${run.url}/api/model/iris-classifier/version/${slow.version}/session/${slow.sessionId}/invocation`, {
      method: 'POST',
      headers: { authorization: `Bearer ${slow.token}`, 'content-type': 'application/json', prefer: 'wait=120' },
      body: JSON.stringify({ type: 'PREDICT', request: { type: 'FEATURES', body: IRIS } }),
    });
    // Queued by the server process and taken by the executor of this one: the request now waits.
    const running = async () => ((await t.platform.db('invocations').where({ session_id: slow.sessionId, status: 'IN_PROGRESS' }).first('id')) as { id: string } | undefined)?.id;
    await until(async () => (await running()) !== undefined, 'the invocation to run', 60_000);

    server.child.kill('SIGTERM');
    const reply = await answer;
    expect(reply.status).to.equal(202);
    expect(reply.headers.get('preference-applied')).to.equal('wait=120');
    const body = (await reply.json()) as { id: string; status: string };
    expect(body.status).to.equal('QUEUED');
    expect(await running(), 'the invocation, still running when the wait was answered').to.equal(body.id);
    expect(await exitOf(server, SERVER_POD_GRACE_MS), `the server's exit:\n${server.tail()}`).to.deep.equal({ code: 0, signal: null });
  });
});
