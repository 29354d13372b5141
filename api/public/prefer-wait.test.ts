import { expect } from 'chai';
import { startExecutor } from '../../executor/start.js';
import { startTestPlatform, type TestPlatform } from '../../test/support/platform.js';
import { IRIS } from '../../test/support/fixtures.js';
import { floodTenant, type FloodTenant } from '../../test/support/flood.js';
import { until } from '../../test/support/until.js';
import type { Reply } from '../../test/support/http.js';

/** The longest wait the platform grants in these tests (DIDYMA_MAX_PREFER_WAIT_SECONDS). */
const CAP_SECONDS = 8;
/** A model call that outlasts any wait of these tests. */
const SLOW_MS = 60_000;

describe('Prefer: wait on POST …/invocation: a prediction in one call', function () {
  this.timeout(180_000);
  let t: TestPlatform;
  let executor: Awaited<ReturnType<typeof startExecutor>>;
  const tenants: FloodTenant[] = [];

  before(async () => {
    // Fewer request slots than one workspace's waits: were waits holding request slots, every request would be a 503.
    t = await startTestPlatform({ executorConcurrency: 4, maxInFlight: 2, maxPreferWaitSeconds: CAP_SECONDS, maxPreferWaitsPerWorkspace: 3, maxPreferWaits: 5 });
    executor = await startExecutor(t.platform);
  });
  after(async () => {
    await executor?.close();
    for (const tenant of tenants) await tenant.demo.close();
    await t?.close();
  });

  const tenantWith = async (delayMs: number) => {
    const tenant = await floodTenant(t, delayMs);
    tenants.push(tenant);
    return tenant;
  };
  const sessionPath = (of: FloodTenant) => `/api/model/iris-classifier/version/${of.version}/session/${of.sessionId}`;
  const invoke = (of: FloodTenant, prefer?: string): Promise<Reply> =>
    t.public.post(`${sessionPath(of)}/invocation`, { token: of.token, json: { type: 'PREDICT', request: { type: 'FEATURES', body: IRIS } }, headers: prefer === undefined ? {} : { prefer } });
  const waits = () => t.platform.predictionWaits.waits;

  it('answers 200 with the finished invocation when it completes within the wait, and says so in Preference-Applied', async () => {
    const fast = await tenantWith(10);
    const reply = await invoke(fast, 'wait=5');
    expect(reply.status, reply.text).to.equal(200);
    expect(reply.headers.get('preference-applied')).to.equal('wait=5');
    expect(reply.body).to.include({ status: 'COMPLETED', type: 'PREDICT' });
    expect(JSON.parse(reply.body.response as string)).to.have.property('outputs');
    expect(reply.body.attempts).to.have.length(1);
    // The invocation as a GET reads it afterwards.
    const read = await t.public.get(`${sessionPath(fast)}/invocation/${reply.body.id}`, { token: fast.token });
    expect(read.body).to.deep.equal(reply.body);
    expect(waits().waiting, 'no wait slot kept').to.equal(0);
  });

  it('answers 201 as before without the header, with another preference, or with a malformed wait', async () => {
    const fast = await tenantWith(10);
    for (const prefer of [undefined, 'respond-async', 'return=minimal', 'wait=soon', 'wait=-1', 'wait=2.5']) {
      const reply = await invoke(fast, prefer);
      expect(reply.status, `${prefer}: ${reply.text}`).to.equal(201);
      expect(reply.headers.get('preference-applied'), String(prefer)).to.equal(null);
      expect(reply.body.status, String(prefer)).to.equal('QUEUED');
    }
  });

  it('cuts a longer wait to the maximum, then answers 202 with the invocation as queued', async () => {
    const slow = await tenantWith(SLOW_MS);
    const reply = await invoke(slow, 'respond-async, wait=3600');
    expect(reply.status, reply.text).to.equal(202);
    expect(reply.headers.get('preference-applied')).to.equal(`wait=${CAP_SECONDS}`);
    expect(reply.body).to.include({ status: 'QUEUED' });
    expect(reply.body).not.to.have.property('attempts');
    const row = await t.platform.db('invocations').where({ id: reply.body.id }).first('status');
    expect(row?.status, 'the invocation, queued whatever the wait').to.be.oneOf(['QUEUED', 'IN_PROGRESS']);
    await t.public.post(`${sessionPath(slow)}/cancel`, { token: slow.token });
  });

  it('answers 200 with a CANCELLED invocation when it is cancelled during the wait', async () => {
    const slow = await tenantWith(SLOW_MS);
    const waiting = invoke(slow, `wait=${CAP_SECONDS}`);
    await until(async () => waits().waiting === 1, 'the request to wait');
    const [row] = (await t.platform.db('invocations').where({ session_id: slow.sessionId }).select('id')) as Array<{ id: string }>;
    expect((await t.public.post(`${sessionPath(slow)}/invocation/${row!.id}/cancel`, { token: slow.token })).status).to.equal(200);
    const reply = await waiting;
    expect(reply.status, reply.text).to.equal(200);
    expect(reply.body).to.include({ id: row!.id, status: 'CANCELLED' });
  });

  it('keeps one workspace’s waits to its bound, answering the rest at once, while another workspace’s waits, requests and /healthz are served', async () => {
    const [noisy, quiet] = [await tenantWith(SLOW_MS), await tenantWith(10)];
    // The noisy model's calls take executor slots for a minute; one at a time leaves the rest to others.
    await t.platform.db('workspaces').where({ id: noisy.ws.id }).update({ max_in_flight: 1 });
    const held: Array<Promise<Reply>> = [];
    for (let i = 1; i <= 3; i++) {
      held.push(invoke(noisy, `wait=${CAP_SECONDS}`));
      await until(async () => waits().waiting === i, `the noisy workspace's wait ${i}`);
    }
    // Three waits of one session: one reader of its events.
    expect(t.platform.eventStreams.readers.sessions).to.equal(1);
    // Its bound reached (and the process's not yet): more of its requests are answered at once, as without the header, and queued.
    for (let i = 0; i < 3; i++) {
      const reply = await invoke(noisy, `wait=${CAP_SECONDS}`);
      expect(reply.status, reply.text).to.equal(201);
      expect(reply.headers.get('preference-applied')).to.equal(null);
    }
    expect(waits().waiting).to.equal(3);

    // Three waits held, two request slots: the quiet workspace waits and is answered, and its other requests too.
    for (const client of [t.auth, t.private, t.public]) expect((await client.get('/healthz')).status, `${client.baseUrl}/healthz`).to.equal(200);
    const quietWait = await invoke(quiet, `wait=${CAP_SECONDS}`);
    expect(quietWait.status, quietWait.text).to.equal(200);
    expect(quietWait.body.status).to.equal('COMPLETED');
    expect((await t.public.get('/api/model', { token: quiet.token })).status).to.equal(200);
    expect((await invoke(quiet)).status).to.equal(201);

    // The noisy waits end when their invocations do.
    expect((await t.public.post(`${sessionPath(noisy)}/cancel`, { token: noisy.token })).status).to.equal(200);
    const answers = await Promise.all(held);
    expect(answers.map((reply) => [reply.status, reply.body.status])).to.deep.equal(Array(3).fill([200, 'CANCELLED']));
    await until(async () => waits().waiting === 0 && t.platform.eventStreams.readers.sessions === 0, 'every wait slot and reader given back');
  });
});
