import { expect } from 'chai';
import { floodPlatform, quietDuringFlood, type FloodTenant } from '../../test/support/flood.js';
import { until } from '../../test/support/until.js';

// Behaviour, not timing: each test says what must have happened before what.
describe('fair share: no workspace can hold the executors from another', function () {
  this.timeout(120_000);
  const platform = floodPlatform({ executorConcurrency: 2 });
  const tenantOf = (delayMs: number) => platform.tenant(delayMs);
  const setWorkspace = async (tenant: FloodTenant, quota: Record<string, number | null>) => {
    const reply = await platform.t.auth.patch(`/api/auth/workspace/${tenant.ws.id}/quota`, { token: platform.staffToken, json: quota });
    expect(reply.status, reply.text).to.equal(200);
  };
  const limitDeployments = async (tenant: FloodTenant, maxConcurrentCalls: number) => {
    for (const { deployment_key: key } of (await platform.t.private.get('/api/deployment', { token: tenant.token })).body as Array<{ deployment_key: string }>) {
      const reply = await platform.t.private.patch(`/api/deployment/${key}`, { token: tenant.token, json: { max_concurrent_calls: maxConcurrentCalls } });
      expect(reply.status, reply.text).to.equal(200);
    }
  };

  it('serves a quiet workspace while another has a backlog, long before the backlog drains', async () => {
    const { noisyQueued } = await quietDuringFlood(platform.t, 150, 100);
    expect(noisyQueued, 'the flooding workspace’s predictions still queued when the quiet one’s completed').to.be.greaterThan(100);
  });

  it('runs a workspace’s higher priority first, whatever it queued before', async () => {
    const tenant = await tenantOf(100);
    const low = await tenant.invoke(100, { priority: 2 });
    const [urgent] = await tenant.invoke(1, { priority: 9 });
    await until(async () => (await tenant.statuses()).COMPLETED === 101, 'all the predictions', 60_000);
    const rows = await platform.t.platform.db('invocations').whereIn('id', [...low, urgent!]).select('id', 'created_at', 'started_at');
    const urgentRow = rows.find((row) => row.id === urgent)!;
    // Those claimed after the urgent one was queued went after it, but for the claims already under way when it
    // was committed: at most the executor's prefetch (twice its concurrency of 2). Those claimed ahead
    // still wait for a model call behind it (executor/slots.ts).
    const claimedLater = rows.filter((row) => row.id !== urgent && row.started_at > urgentRow.created_at);
    const ahead = claimedLater.filter((row) => row.started_at < urgentRow.started_at);
    expect(claimedLater.length, 'low-priority predictions still queued when the urgent one came').to.be.greaterThan(10);
    expect(ahead.length, 'low-priority predictions claimed before the urgent one').to.be.at.most(4);
  });

  it('shares the executors between flooding workspaces in proportion to their weights', async () => {
    const [heavy, light] = [await tenantOf(50), await tenantOf(50)];
    await setWorkspace(heavy, { share_weight: 3 });
    const backlog = 120;
    await Promise.all([heavy.invoke(backlog), light.invoke(backlog)]);
    await until(async () => (await heavy.statuses()).COMPLETED === backlog, 'the heavy workspace’s backlog', 60_000);
    const { heavyClaims, window } = await claimsWhileBothWaited(heavy, light);
    // Every claim of the window sees both backlogs; what it may get wrong is bounded: the
    // runs claimed ahead of a model call at either end of the window (twice the concurrency
    // of 2, on one executor), and one model slot's grant per workspace (executor/slots.ts).
    const tolerance = 2 * (2 * 2) + 2;
    expect(window, 'claims while both workspaces had work queued').to.be.at.least(60);
    expect(Math.abs(heavyClaims - (3 / 4) * window), `${heavyClaims} of ${window} claims, ±${tolerance}`).to.be.at.most(tolerance);
  });

  /**
   * The claims made while both workspaces had work queued (after the last of
   * their appends, before the first of them had nothing left to claim), and
   * how many of them the heavy one got.
   */
  const claimsWhileBothWaited = async (heavy: FloodTenant, light: FloodTenant) => {
    const rows: Array<{ workspace_id: number; created_at: Date; started_at: Date }> = await platform.t.platform
      .db('invocations')
      .whereIn('workspace_id', [heavy.ws.id, light.ws.id])
      .select('workspace_id', 'created_at', 'started_at');
    const time = (date: Date) => new Date(date).getTime();
    const lastAppend = Math.max(...rows.map((row) => time(row.created_at)));
    const lastClaimOf = (id: number) => Math.max(...rows.filter((row) => row.workspace_id === id).map((row) => time(row.started_at)));
    const firstDrained = Math.min(lastClaimOf(heavy.ws.id), lastClaimOf(light.ws.id));
    const inWindow = rows.filter((row) => row.started_at && time(row.started_at) > lastAppend && time(row.started_at) < firstDrained);
    return { heavyClaims: inWindow.filter((row) => row.workspace_id === heavy.ws.id).length, window: inWindow.length };
  };

  it('keeps a workspace within its max_in_flight, and a deployment within its max_concurrent_calls', async () => {
    const limited = await tenantOf(30);
    await setWorkspace(limited, { max_in_flight: 1 });
    await limited.invoke(12);
    await until(async () => (await limited.statuses()).COMPLETED === 12, 'the limited workspace’s predictions', 60_000);
    expect(limited.demo.maxConcurrentInferences()).to.equal(1);

    const capped = await tenantOf(30);
    await limitDeployments(capped, 1);
    await capped.invoke(12);
    await until(async () => (await capped.statuses()).COMPLETED === 12, 'the capped deployment’s predictions', 60_000);
    expect(capped.demo.maxConcurrentInferences()).to.equal(1);
  });

  it('answers 429 with Retry-After past max_queued, and queues nothing of the refused request', async () => {
    const tenant = await tenantOf(5000); // long enough that none finishes before the count, even on a loaded machine
    await setWorkspace(tenant, { max_queued: 3, max_in_flight: 1 });
    // One runs (slowly), three wait: the first is claimed before the others come, or all four would count as queued.
    await tenant.invoke(1);
    await until(async () => (await tenant.statuses()).IN_PROGRESS === 1, 'the first prediction to start', 60_000);
    await tenant.invoke(3, { parallel: 1 });
    const path = `/api/model/iris-classifier/version/${tenant.version}/session/${tenant.sessionId}/invocation`;
    const refused = await platform.t.public.post(path, { token: tenant.token, json: { type: 'PREDICT', request: { type: 'FEATURES', body: '{"sepal_length":1,"sepal_width":1,"petal_length":1,"petal_width":1}' } } });
    expect(refused.status).to.equal(429);
    expect(refused.body).to.include({ message_code: 'quota_exceeded' });
    expect(refused.body.message).to.include('max_queued');
    expect(Number(refused.headers.get('retry-after'))).to.be.greaterThan(0);
    const statuses = await tenant.statuses();
    expect((statuses.QUEUED ?? 0) + (statuses.IN_PROGRESS ?? 0)).to.equal(4);
  });
});
