import { expect } from 'chai';
import { colleague } from '../../test/support/fixtures.js';
import { floodPlatform, type FloodTenant } from '../../test/support/flood.js';
import { until } from '../../test/support/until.js';

describe('cancel: queued and running invocations, one or a whole session', function () {
  this.timeout(120_000);
  // A short lease: a running invocation's executor learns of its cancel at its next renewal, a third of it.
  const platform = floodPlatform({ executorConcurrency: 2, executorLeaseSeconds: 3 });

  /** A tenant whose model takes `delayMs`, running one invocation at a time so the rest stay QUEUED. */
  const oneAtATime = async (delayMs: number) => {
    const tenant = await platform.tenant(delayMs);
    const reply = await platform.t.auth.patch(`/api/auth/workspace/${tenant.ws.id}/quota`, { token: platform.staffToken, json: { max_in_flight: 1 } });
    expect(reply.status, reply.text).to.equal(200);
    return tenant;
  };
  const path = (tenant: FloodTenant) => `/api/model/iris-classifier/version/${tenant.version}/session/${tenant.sessionId}`;
  const invocation = async (tenant: FloodTenant, id: string) => (await platform.t.public.get(`${path(tenant)}/invocation/${id}`, { token: tenant.token })).body;
  const cancel = (tenant: FloodTenant, id: string, token = tenant.token) => platform.t.public.post(`${path(tenant)}/invocation/${id}/cancel`, { token });

  it('a QUEUED invocation is CANCELLED and never runs; the rest of the queue runs', async () => {
    // The first call lasts long enough that the cancel lands while the second still waits, even on a loaded host.
    const tenant = await oneAtATime(3_000);
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
    const fast = await platform.tenant(0);
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

    const stranger = await colleague(platform.t, tenant);
    expect((await cancel(tenant, done!, stranger.token)).status).to.equal(404);
    const otherWorkspace = await platform.tenant(0);
    expect((await cancel(tenant, done!, otherWorkspace.token)).status).to.equal(404);
  });

  it('a session: every QUEUED and IN_PROGRESS invocation at once, or only those of one status', async () => {
    const tenant = await oneAtATime(20_000);
    const ids = await tenant.invoke(5);
    await until(async () => (await tenant.statuses()).IN_PROGRESS === 1, 'one invocation to run');
    const queuedOnly = await platform.t.public.post(`${path(tenant)}/cancel?status=QUEUED`, { token: tenant.token });
    expect(queuedOnly.status, queuedOnly.text).to.equal(200);
    expect(queuedOnly.body).to.deep.equal({ cancelled: 4 });
    expect(await tenant.statuses()).to.deep.equal({ IN_PROGRESS: 1, CANCELLED: 4 });
    const rest = await platform.t.public.post(`${path(tenant)}/cancel`, { token: tenant.token });
    expect(rest.body).to.deep.equal({ cancelled: 1 });
    expect(await tenant.statuses()).to.deep.equal({ CANCELLED: 5 });
    expect((await platform.t.public.post(`${path(tenant)}/cancel`, { token: tenant.token })).body).to.deep.equal({ cancelled: 0 });
    expect((await platform.t.public.post(`${path(tenant)}/cancel?status=COMPLETED`, { token: tenant.token })).status).to.equal(400);
    expect(ids).to.have.length(5);
  });
});
