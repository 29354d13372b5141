import { expect } from 'chai';
import { floodTenant, type FloodTenant } from '../support/flood.js';
import { exitOf } from '../support/didyma-process.js';
import { openEventStream, statusesOf, type SentEvent } from '../support/event-stream-client.js';
import { startPublicProcess, type PublicProcess } from '../support/public-process.js';
import { until } from '../support/until.js';

// A session's event stream served by a public server in a process of its own,
// told to stop as Kubernetes tells it while invocations run: the client gets
// the events up to the end and a clean end of the answer, resumes with
// Last-Event-ID on another server, and loses no event and sees none twice.

/** The server pod's termination grace period (charts/didyma). */
const SERVER_POD_GRACE_MS = 30_000;
const INVOCATIONS = 40;

describe('event streams against a public server process: drained by SIGTERM, resumed elsewhere', function () {
  this.timeout(240_000);
  let run: PublicProcess;
  let tenant: FloodTenant;

  before(async () => {
    run = await startPublicProcess('dy-drain', { DIDYMA_SHUTDOWN_DRAIN_SECONDS: '3', DIDYMA_SHUTDOWN_GRACE_SECONDS: '25' }, { executorConcurrency: 1 });
    tenant = await floodTenant(run.t, 50);
    await run.server.waitReady(`${run.url}/readyz`, 60_000);
  });

  after(async () => {
    await run?.close();
    await tenant?.demo.close();
  });

  const eventsPath = () => `/api/model/iris-classifier/version/${tenant.version}/session/${tenant.sessionId}/events`;
  const completed = (received: SentEvent[]) => received.filter((sent) => sent.data.status === 'COMPLETED').length;

  it('ends the stream cleanly on SIGTERM, and the stream resumed on another server holds every event once', async () => {
    const { t, server } = run;
    const first = await openEventStream(`${run.url}${eventsPath()}`, tenant.token);
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
