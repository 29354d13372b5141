import { createDemoModelServer, type DemoModelServer } from '../../demo/model-server/server.js';
import { IRIS, registeredIris, tenant, type Tenant } from './fixtures.js';
import { makeStaff, startTestPlatform, unique, type TestPlatform } from './platform.js';
import { startExecutor } from '../../executor/start.js';
import type { ConfigValues } from '../../kernel/config/variables.js';
import { until } from './until.js';

/** A tenant with iris-classifier on a demo model server of its own whose every call takes `delayMs`, and an OPEN session. */
export interface FloodTenant extends Tenant {
  version: string;
  sessionId: string;
  demo: DemoModelServer;
  /** Queues `count` predictions through the public API, `parallel` requests at a time; their ids. */
  invoke(count: number, options?: { parallel?: number; priority?: number }): Promise<string[]>;
  statuses(): Promise<Record<string, number>>;
}

export async function floodTenant(t: TestPlatform, delayMs: number): Promise<FloodTenant> {
  const version = unique('v');
  const demo = createDemoModelServer({ version, inferenceDelayMs: delayMs });
  const { url } = await demo.listen(0, '127.0.0.1');
  const owner = await tenant(t);
  await registeredIris(t, owner, url, version);
  const path = `/api/model/iris-classifier/version/${version}`;
  const opened = await t.public.post(`${path}/session`, { token: owner.token });
  const sessionId = opened.body.id as string;
  const one = async (priority?: number) => {
    const reply = await t.public.post(`${path}/session/${sessionId}/invocation`, {
      token: owner.token,
      json: { type: 'PREDICT', request: { type: 'FEATURES', body: IRIS }, ...(priority === undefined ? {} : { priority }) },
    });
    if (reply.status !== 201) throw new Error(`invocation: ${reply.status} ${reply.text}`);
    return reply.body.id as string;
  };
  return {
    ...owner,
    version,
    sessionId,
    demo,
    async invoke(count, options = {}) {
      const ids: string[] = [];
      const parallel = options.parallel ?? 16;
      for (let sent = 0; sent < count; sent += parallel) {
        ids.push(...(await Promise.all(Array.from({ length: Math.min(parallel, count - sent) }, () => one(options.priority)))));
      }
      return ids;
    },
    async statuses() {
      const rows = (await t.platform.db('invocations').where({ session_id: sessionId }).groupBy('status').select('status').count({ n: '*' })) as Array<{ status: string; n: string | number }>;
      return Object.fromEntries(rows.map((row) => [row.status, Number(row.n)]));
    },
  };
}

/**
 * One tenant floods the executors with `flood` predictions; once they are all
 * queued, a quiet tenant sends one. What the flooding tenant still had
 * queued when the quiet tenant's prediction completed.
 */
export async function quietDuringFlood(t: TestPlatform, flood: number, delayMs: number) {
  const noisy = await floodTenant(t, delayMs);
  const quiet = await floodTenant(t, delayMs);
  try {
    await noisy.invoke(flood);
    const [id] = await quiet.invoke(1);
    await until(async () => (await quiet.statuses()).COMPLETED === 1, 'the quiet tenant’s prediction', 60_000);
    const noisyQueued = (await noisy.statuses()).QUEUED ?? 0;
    return { id, noisyQueued, noisy, quiet };
  } finally {
    await Promise.all([noisy.demo.close(), quiet.demo.close()]);
  }
}

/**
 * A platform with an in-process executor of `concurrency` model calls, a
 * staff token, and tenants made with `tenant(delayMs)` whose demo servers
 * close, and whose unfinished work is deleted, after each test.
 */
export function floodPlatform(overrides: Partial<ConfigValues>) {
  const tenants: FloodTenant[] = [];
  const state = {} as { t: TestPlatform; executor: Awaited<ReturnType<typeof startExecutor>>; staffToken: string };
  before(async () => {
    state.t = await startTestPlatform(overrides);
    state.executor = await startExecutor(state.t.platform);
    state.staffToken = (await makeStaff(state.t)).token;
  });
  afterEach(async () => {
    for (const tenant of tenants.splice(0)) await tenant.demo.close();
    // Test cleanup only: what a test left queued would hold the executor in the next one.
    await state.t.platform.db('invocations').whereIn('status', ['QUEUED', 'IN_PROGRESS']).delete();
  });
  after(async () => {
    await state.executor?.close();
    await state.t?.close();
  });
  return {
    get t() {
      return state.t;
    },
    get staffToken() {
      return state.staffToken;
    },
    async tenant(delayMs: number) {
      const tenant = await floodTenant(state.t, delayMs);
      tenants.push(tenant);
      return tenant;
    },
  };
}
