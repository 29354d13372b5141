import { expect } from 'chai';
import { startExecutor } from '../../executor/start.js';
import { startTestPlatform, type TestPlatform } from '../../test/support/platform.js';
import { colleague } from '../../test/support/fixtures.js';
import { floodTenant, type FloodTenant } from '../../test/support/flood.js';
import { openEventStream as openStream, statusesOf } from '../../test/support/event-stream-client.js';

async function eventually(check: () => boolean, what: string, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describe('session events: status changes as Server-Sent Events', function () {
  this.timeout(120_000);
  let t: TestPlatform;
  let executor: Awaited<ReturnType<typeof startExecutor>>;
  let tenant: FloodTenant;

  before(async () => {
    t = await startTestPlatform({ executorConcurrency: 2 });
    executor = await startExecutor(t.platform);
    tenant = await floodTenant(t, 20);
  });
  after(async () => {
    await tenant?.demo.close();
    await executor?.close();
    await t?.close();
  });

  const eventsUrl = (of: FloodTenant) => `${t.public.baseUrl}/api/model/iris-classifier/version/${of.version}/session/${of.sessionId}/events`;

  it('streams every status of an invocation in order, as it happens', async () => {
    const stream = await openStream(eventsUrl(tenant), tenant.token);
    try {
      expect(stream.response.status).to.equal(200);
      expect(stream.response.headers.get('content-type')).to.match(/^text\/event-stream/);
      const [id] = await tenant.invoke(1);
      await eventually(() => statusesOf(stream.received, id!).includes('COMPLETED'), 'COMPLETED on the stream');
      expect(statusesOf(stream.received, id!)).to.deep.equal(['QUEUED', 'IN_PROGRESS', 'COMPLETED']);
    } finally {
      await stream.close();
    }
  });

  it('resumes with Last-Event-ID after a disconnect: nothing missed, and the history is not sent again', async () => {
    const first = await openStream(eventsUrl(tenant), tenant.token);
    const before = await tenant.invoke(3);
    await eventually(() => before.every((id) => statusesOf(first.received, id).includes('COMPLETED')), 'the first three on the stream');
    await first.close();
    const lastId = first.lastId()!;
    expect(lastId, 'an id to resume from').to.be.a('string');
    // The `id:` is the stream's position (a PostgreSQL snapshot), not an event's own `id` (docs/decisions.md says why).
    expect(lastId).to.match(/^\d+:\d+:[\d,]*$/);
    expect(first.received.map((sent) => sent.data.id)).to.not.include(lastId);
    expect(first.received.every((sent) => /^\d+$/.test(sent.data.id))).to.equal(true);

    const during = await tenant.invoke(3); // run while no stream is open
    const second = await openStream(eventsUrl(tenant), tenant.token, lastId);
    try {
      const after = await tenant.invoke(2);
      await eventually(() => [...during, ...after].every((id) => statusesOf(second.received, id).includes('COMPLETED')), 'every later invocation on the resumed stream');
      for (const id of [...during, ...after]) expect(statusesOf(second.received, id), id).to.deep.equal(['QUEUED', 'IN_PROGRESS', 'COMPLETED']);
      expect(second.received.filter((sent) => before.includes(sent.data.invocation_id)), 'what the first stream had').to.deep.equal([]);
    } finally {
      await second.close();
    }
  });

  it('another user’s session is a 404, an id the stream never sent a 400', async () => {
    const stranger = await colleague(t, tenant);
    expect((await t.public.get(new URL(eventsUrl(tenant)).pathname, { token: stranger.token })).status).to.equal(404);
    const bad = await t.public.get(new URL(eventsUrl(tenant)).pathname, { token: tenant.token, headers: { 'last-event-id': 'not-an-id' } });
    expect(bad.status).to.equal(400);
    expect(bad.body.message).to.include('Last-Event-ID');
  });

  it('answers a Last-Event-ID PostgreSQL would refuse with a 400 before any stream starts', async () => {
    // xmin after xmax, an in-progress id outside [xmin, xmax), out of order, and id 0: each once a 200 and a stream that died on its first read.
    for (const id of ['5:3:', '3:9:12', '3:9:2', '3:9:7,4', '0:0:']) {
      for (const headers of [{ 'last-event-id': id }, undefined]) {
        const path = `${new URL(eventsUrl(tenant)).pathname}${headers ? '' : `?last_event_id=${encodeURIComponent(id)}`}`;
        const reply = await t.public.get(path, { token: tenant.token, headers });
        expect(reply.status, id).to.equal(400);
        expect(reply.headers.get('content-type'), id).to.match(/^application\/json/);
        expect(reply.body.message, id).to.include('Last-Event-ID');
      }
    }
    // The earlier tests' streams, closed by their clients, give their slots back too.
    await eventually(() => t.platform.eventStreams.slots.open === 0, 'no stream slot kept by a refused or closed stream');
  });
});
