import { expect } from 'chai';
import { startExecutor } from '../../executor/start.js';
import { startTestPlatform, type TestPlatform } from '../../test/support/platform.js';
import { colleague, type Tenant } from '../../test/support/fixtures.js';
import { floodTenant, type FloodTenant } from '../../test/support/flood.js';
import { openEventStream, statusesOf, type EventStream } from '../../test/support/event-stream-client.js';
import { until } from '../../test/support/until.js';

/** A platform with an in-process executor and the stream limits given; `streams` are closed after each test. */
function streamPlatform(limits: { maxInFlight: number; maxEventStreamsPerUser: number; maxEventStreamsPerWorkspace: number; maxEventStreams: number }) {
  const state = {} as { t: TestPlatform; executor: Awaited<ReturnType<typeof startExecutor>>; tenants: FloodTenant[]; streams: EventStream[] };
  before(async () => {
    state.t = await startTestPlatform({ executorConcurrency: 2, ...limits });
    state.executor = await startExecutor(state.t.platform);
    state.tenants = [];
    state.streams = [];
  });
  afterEach(async () => {
    await Promise.all(state.streams.splice(0).map((stream) => stream.close()));
    await until(async () => state.t.platform.eventStreams.slots.open === 0, 'every stream slot given back');
  });
  after(async () => {
    for (const tenant of state.tenants) await tenant.demo.close();
    await state.executor?.close();
    await state.t?.close();
  });
  const eventsPath = (of: FloodTenant, sessionId = of.sessionId) => `/api/model/iris-classifier/version/${of.version}/session/${sessionId}/events`;
  return {
    get t() {
      return state.t;
    },
    eventsPath,
    async tenant() {
      const tenant = await floodTenant(state.t, 10);
      state.tenants.push(tenant);
      return tenant;
    },
    /** An open stream of `who` (200), closed after the test. */
    async stream(who: Tenant, path: string) {
      const stream = await openEventStream(state.t.public.baseUrl + path, who.token);
      state.streams.push(stream);
      expect(stream.response.status, 'an open stream').to.equal(200);
      return stream;
    },
    /** What a request to the stream answers when it is refused. */
    refused: (who: Tenant, path: string) => state.t.public.get(path, { token: who.token }),
  };
}

/** The three servers' /healthz and another workspace's reads and writes: served, not refused. */
async function quietServed(t: TestPlatform, quiet: FloodTenant) {
  for (const client of [t.auth, t.private, t.public]) expect((await client.get('/healthz')).status, `${client.baseUrl}/healthz`).to.equal(200);
  expect((await t.public.get('/api/model', { token: quiet.token })).status, 'the quiet workspace’s GET').to.equal(200);
  const [id] = await quiet.invoke(1);
  await until(async () => (await quiet.statuses()).COMPLETED !== undefined, 'the quiet workspace’s prediction to complete');
  return id!;
}

describe('event streams: slots of their own, capped per user, per workspace and per server', function () {
  this.timeout(180_000);
  // Fewer request slots than one user's streams: were streams holding request slots, every request would be a 503.
  const platform = streamPlatform({ maxInFlight: 4, maxEventStreamsPerUser: 6, maxEventStreamsPerWorkspace: 8, maxEventStreams: 10 });

  it('refuses a user’s streams past the cap with 429, while another workspace’s requests and /healthz answer 200', async () => {
    const [noisy, quiet] = [await platform.tenant(), await platform.tenant()];
    for (let i = 0; i < 6; i++) await platform.stream(noisy, platform.eventsPath(noisy));
    const refused = await platform.refused(noisy, platform.eventsPath(noisy));
    expect(refused.status).to.equal(429);
    expect(refused.body).to.include({ message_code: 'quota_exceeded' });
    expect(refused.body.message).to.include('event streams').and.include('one user');
    expect(Number(refused.headers.get('retry-after'))).to.be.greaterThan(0);

    // Six streams open, four request slots: the quiet workspace is served, and its own stream follows its work.
    const quietStream = await platform.stream(quiet, platform.eventsPath(quiet));
    const id = await quietServed(platform.t, quiet);
    await until(async () => statusesOf(quietStream.received, id).includes('COMPLETED'), 'the quiet stream to see its prediction complete');
  });

  it('refuses a workspace’s streams past its cap with 429, whichever of its members opens them', async () => {
    const [noisy, quiet] = [await platform.tenant(), await platform.tenant()];
    const member = await colleague(platform.t, noisy);
    const opened = await platform.t.public.post(`/api/model/iris-classifier/version/${noisy.version}/session`, { token: member.token });
    const memberPath = platform.eventsPath(noisy, opened.body.id as string);
    for (let i = 0; i < 6; i++) await platform.stream(noisy, platform.eventsPath(noisy));
    for (let i = 0; i < 2; i++) await platform.stream(member, memberPath);
    const refused = await platform.refused(member, memberPath);
    expect(refused.status).to.equal(429);
    expect(refused.body.message).to.include('one workspace');
    await quietServed(platform.t, quiet);
  });

  it('refuses streams past the server’s maximum with 503 and Retry-After, and still serves requests', async () => {
    const tenants = [await platform.tenant(), await platform.tenant(), await platform.tenant()];
    for (const tenant of tenants) for (let i = 0; i < (tenant === tenants[2] ? 2 : 4); i++) await platform.stream(tenant, platform.eventsPath(tenant));
    const refused = await platform.refused(tenants[2]!, platform.eventsPath(tenants[2]!));
    expect(refused.status).to.equal(503);
    expect(refused.body).to.include({ message_code: 'overloaded' });
    expect(Number(refused.headers.get('retry-after'))).to.be.greaterThan(0);
    await quietServed(platform.t, tenants[0]!);
  });

  it('gives a closed stream’s slot back', async () => {
    const noisy = await platform.tenant();
    const streams: EventStream[] = [];
    // One after another: six admissions at once would pass the four request slots they go through.
    for (let i = 0; i < 6; i++) streams.push(await platform.stream(noisy, platform.eventsPath(noisy)));
    expect((await platform.refused(noisy, platform.eventsPath(noisy))).status).to.equal(429);
    await streams[0]!.close();
    await until(async () => platform.t.platform.eventStreams.slots.open === 5, 'the slot given back');
    await platform.stream(noisy, platform.eventsPath(noisy));
  });
});

describe('event streams: an idle stream costs nothing when other tenants’ invocations change', function () {
  this.timeout(180_000);
  const STREAMS = 30;
  const platform = streamPlatform({ maxInFlight: 256, maxEventStreamsPerUser: STREAMS, maxEventStreamsPerWorkspace: STREAMS, maxEventStreams: 100 });

  it('reads a session’s events only when that session changes, once for all of its streams', async () => {
    const { t } = platform;
    const [noisy, quiet] = [await platform.tenant(), await platform.tenant()];
    const [first] = await noisy.invoke(1);
    await until(async () => (await noisy.statuses()).COMPLETED === 1, 'the noisy workspace’s first prediction');
    await until(async () => t.platform.changes().isListening, 'the change notifications');
    const streams = await Promise.all(Array.from({ length: STREAMS }, () => platform.stream(noisy, platform.eventsPath(noisy))));
    // Each stream has had its first read once it holds the history.
    await until(async () => streams.every((stream) => statusesOf(stream.received, first!).includes('COMPLETED')), 'every stream to catch up');

    let reads = 0;
    const countReads = (query: { sql?: string; bindings?: unknown[] }) => {
      if (query.sql?.includes('from invocation_events') && query.bindings?.[0] === noisy.sessionId) reads += 1;
    };
    t.platform.db.on('query', countReads);
    try {
      const quietStream = await platform.stream(quiet, platform.eventsPath(quiet));
      const quietIds = await quiet.invoke(10);
      await until(async () => quietIds.every((id) => statusesOf(quietStream.received, id).includes('COMPLETED')), 'the quiet workspace’s stream to see its ten predictions');
      expect(reads, `reads of the idle session while another workspace's ten predictions ran`).to.equal(0);

      const [next] = await noisy.invoke(1);
      await until(async () => streams.every((stream) => statusesOf(stream.received, next!).includes('COMPLETED')), 'every stream to see the new prediction');
      // Three statuses, each announced once: a read per stream would be 90.
      expect(reads, `reads of the session for ${STREAMS} streams and one prediction`).to.be.at.most(6);
    } finally {
      t.platform.db.off('query', countReads);
    }
  });
});
