import { expect } from 'chai';
import { startExecutor } from '../../executor/start.js';
import { makeStaff, startTestPlatform, type TestPlatform } from '../../test/support/platform.js';
import { colleague } from '../../test/support/fixtures.js';
import { floodTenant, type FloodTenant } from '../../test/support/flood.js';
import { until } from '../../test/support/until.js';

describe('cancel: queued and running invocations, one or a whole session', function () {
  this.timeout(120_000);
  let t: TestPlatform;
  let executor: Awaited<ReturnType<typeof startExecutor>>;
  let staffToken: string;
  const tenants: FloodTenant[] = [];

  before(async () => {
    // A short lease: a running invocation's executor learns of its cancel at its next renewal, a third of it.
    t = await startTestPlatform({ executorConcurrency: 2, executorLeaseSeconds: 3 });
    executor = await startExecutor(t.platform);
    staffToken = (await makeStaff(t)).token;
  });
  afterEach(async () => {
    for (const tenant of tenants.splice(0)) await tenant.demo.close();
    await t.platform.db('invocations').whereIn('status', ['QUEUED', 'IN_PROGRESS']).delete();
  });
  after(async () => {
    await executor?.close();
    await t?.close();
  });

  /** A tenant whose model takes `delayMs`, running one invocation at a time so the rest stay QUEUED. */
  const oneAtATime = async (delayMs: number) => {
    const tenant = await floodTenant(t, delayMs);
    tenants.push(tenant);
    const reply = await t.auth.patch(`/api/auth/workspace/${tenant.ws.id}/quota`, { token: staffToken, json: { max_in_flight: 1 } });
    expect(reply.status, reply.text).to.equal(200);
    return tenant;
  };
  const path = (tenant: FloodTenant) => `/api/model/iris-classifier/version/${tenant.version}/session/${tenant.sessionId}`;
  const invocation = async (tenant: FloodTenant, id: string) => (await t.public.get(`${path(tenant)}/invocation/${id}`, { token: tenant.token })).body;
  const cancel = (tenant: FloodTenant, id: string, token = tenant.token) => t.public.post(`${path(tenant)}/invocation/${id}/cancel`, { token });

  it('a QUEUED invocation is CANCELLED and never runs; the rest of the queue runs', async () => {
    const tenant = await oneAtATime(300);
    const [first, second, third] = await tenant.invoke(3, { parallel: 1 });
    const reply = await cancel(tenant, second!);
    expect(reply.status, reply.text).to.equal(200);
    expect(reply.body).to.include({ id: second, status: 'CANCELLED' });
    await until(async () => (await invocation(tenant, third!)).status === 'COMPLETED', 'the third to complete');
    expect((await invocation(tenant, first!)).status).to.equal('COMPLETED');
    const cancelled = await invocation(tenant, second!);
    expect(cancelled).to.include({ status: 'CANCELLED', error: null });
    expect(tenant.demo.stats()[`iris-classifier:${tenant.version}`], 'the model ran for the other two only').to.equal(2);
  });

  it('an IN_PROGRESS invocation: its call to the model server is aborted and its result never taken', async () => {
    const tenant = await oneAtATime(20_000);
    const [running] = await tenant.invoke(1);
    await until(async () => (await invocation(tenant, running!)).status === 'IN_PROGRESS', 'the invocation to run');
    const reply = await cancel(tenant, running!);
    expect(reply.status, reply.text).to.equal(200);
    expect(reply.body.status).to.equal('CANCELLED');
    await until(async () => tenant.demo.abandonedInferences() === 1, 'the model server to see the call aborted');
    expect(await invocation(tenant, running!)).to.include({ status: 'CANCELLED', response: '' });
    // The workspace's one slot is free again: the next invocation runs.
    const fast = await floodTenant(t, 0);
    tenants.push(fast);
    const [next] = await fast.invoke(1);
    await until(async () => (await invocation(fast, next!)).status === 'COMPLETED', 'the next invocation to complete');
  });

  it('a finished invocation answers 409 and stays as it was; another user’s is a 404', async () => {
    const tenant = await oneAtATime(0);
    const [done] = await tenant.invoke(1);
    await until(async () => (await invocation(tenant, done!)).status === 'COMPLETED', 'the invocation to complete');
    const reply = await cancel(tenant, done!);
    expect(reply.status).to.equal(409);
    expect(reply.body.message_code).to.equal('invocation_finished');
    expect((await invocation(tenant, done!)).status).to.equal('COMPLETED');

    const stranger = await colleague(t, tenant);
    expect((await cancel(tenant, done!, stranger.token)).status).to.equal(404);
    const otherWorkspace = await floodTenant(t, 0);
    tenants.push(otherWorkspace);
    expect((await cancel(tenant, done!, otherWorkspace.token)).status).to.equal(404);
  });

  it('a session: every QUEUED and IN_PROGRESS invocation at once, or only those of one status', async () => {
    const tenant = await oneAtATime(20_000);
    const ids = await tenant.invoke(5);
    await until(async () => (await tenant.statuses()).IN_PROGRESS === 1, 'one invocation to run');
    const queuedOnly = await t.public.post(`${path(tenant)}/cancel?status=QUEUED`, { token: tenant.token });
    expect(queuedOnly.status, queuedOnly.text).to.equal(200);
    expect(queuedOnly.body).to.deep.equal({ cancelled: 4 });
    expect(await tenant.statuses()).to.deep.equal({ IN_PROGRESS: 1, CANCELLED: 4 });
    const rest = await t.public.post(`${path(tenant)}/cancel`, { token: tenant.token });
    expect(rest.body).to.deep.equal({ cancelled: 1 });
    expect(await tenant.statuses()).to.deep.equal({ CANCELLED: 5 });
    expect((await t.public.post(`${path(tenant)}/cancel`, { token: tenant.token })).body).to.deep.equal({ cancelled: 0 });
    expect((await t.public.post(`${path(tenant)}/cancel?status=COMPLETED`, { token: tenant.token })).status).to.equal(400);
    expect(ids).to.have.length(5);
  });
});
