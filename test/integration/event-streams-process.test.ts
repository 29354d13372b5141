import { expect } from 'chai';
import { IRIS } from '../support/fixtures.js';
import { floodTenant, type FloodTenant } from '../support/flood.js';
import { openEventStream, statusesOf, type EventStream } from '../support/event-stream-client.js';
import { startPublicProcess, type PublicProcess } from '../support/public-process.js';
import { until } from '../support/until.js';

// The stream attack of issue 55 against a public server in a process of its
// own (PostgreSQL and RabbitMQ, as in production), with fewer request slots
// than one user's streams: the user's streams past the cap are a 429, and
// another workspace's requests, its own stream and /healthz are served.

describe('event streams against a public server process: capped apart from the request slots', function () {
  this.timeout(240_000);
  let run: PublicProcess;
  const tenants: FloodTenant[] = [];
  const streams: EventStream[] = [];

  before(async () => {
    run = await startPublicProcess('dy-streams', {
      DIDYMA_MAX_IN_FLIGHT: '4',
      DIDYMA_MAX_EVENT_STREAMS_PER_USER: '6',
      DIDYMA_MAX_EVENT_STREAMS_PER_WORKSPACE: '8',
      DIDYMA_MAX_EVENT_STREAMS: '20',
    });
    await until(async () => (await fetch(`${run.url}/healthz`).catch(() => undefined))?.ok === true, 'the public server to answer', 60_000);
  });

  after(async () => {
    await Promise.all(streams.map((stream) => stream.close()));
    await run?.close();
    for (const tenant of tenants) await tenant.demo.close();
  });

  const eventsUrl = (of: FloodTenant) => `${run.url}/api/model/iris-classifier/version/${of.version}/session/${of.sessionId}/events`;

  it('refuses one user’s seventh stream with 429 while another workspace is served and /healthz answers 200', async () => {
    const [noisy, quiet] = [await floodTenant(run.t, 10), await floodTenant(run.t, 10)];
    tenants.push(noisy, quiet);
    for (let i = 0; i < 6; i++) {
      const stream = await openEventStream(eventsUrl(noisy), noisy.token);
      streams.push(stream);
      expect(stream.response.status, `stream ${i + 1}`).to.equal(200);
    }
    const refused = await fetch(eventsUrl(noisy), { headers: { authorization: `Bearer ${noisy.token}` } });
    expect(refused.status).to.equal(429);
    expect(Number(refused.headers.get('retry-after'))).to.be.greaterThan(0);
    expect(((await refused.json()) as { message: string }).message).to.include('event streams');

    const quietStream = await openEventStream(eventsUrl(quiet), quiet.token);
    streams.push(quietStream);
    expect(quietStream.response.status, 'the quiet workspace’s stream').to.equal(200);
    expect((await fetch(`${run.url}/healthz`)).status).to.equal(200);
    const headers = { authorization: `Bearer ${quiet.token}`, 'content-type': 'application/json' };
    expect((await fetch(`${run.url}/api/model`, { headers })).status, 'the quiet workspace’s GET').to.equal(200);
    const posted = await fetch(`${run.url}/api/model/iris-classifier/version/${quiet.version}/session/${quiet.sessionId}/invocation`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ type: 'PREDICT', request: { type: 'FEATURES', body: IRIS } }),
    });
    expect(posted.status, 'the quiet workspace’s POST').to.equal(201);
    const { id } = (await posted.json()) as { id: string };
    // Written by the executor of another process: the stream hears of it through PostgreSQL's notification.
    await until(async () => statusesOf(quietStream.received, id).includes('COMPLETED'), 'the quiet stream to see its prediction complete', 60_000);

    const malformed = await fetch(eventsUrl(quiet), { headers: { authorization: `Bearer ${quiet.token}`, 'last-event-id': '5:3:' } });
    expect(malformed.status, 'Last-Event-ID 5:3:').to.equal(400);
  });
});
