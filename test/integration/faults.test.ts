import { expect } from 'chai';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { startExecutor } from '../../executor/start.js';
import { createDemoModelServer, type DemoModelServer } from '../../demo/model-server/server.js';
import { startTestPlatform, unique, type TestPlatform } from '../support/platform.js';
import { sharedDatabaseUrl } from '../support/database.js';
import { IRIS, registeredIris, tenant, type Tenant } from '../support/fixtures.js';
import { deleteWorkQueue, requireEnv } from '../support/services.js';

// Faults of the real services under load. The broker and the database are
// stopped and restarted with the project's own scripts; afterwards every
// invocation that was accepted (201) must reach exactly one final status, and
// the model server's own call counter must show each ran exactly once.

const CLIENT_TIMEOUT_MS = 10_000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A service script, asynchronously: the servers under test live in this process and must keep answering. */
function service(name: 'postgres' | 'rabbitmq', action: 'start' | 'stop' | 'restart'): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile('bash', [path.resolve('scripts/services', `${name}.sh`), action], { timeout: 180_000 }, (error, _stdout, stderr) =>
      error ? reject(new Error(`${name}.sh ${action} failed: ${stderr || error.message}`)) : resolve(),
    );
  });
}

async function until(check: () => Promise<boolean>, what: string, timeoutMs = 120_000) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check().catch(() => false)) return;
    await sleep(200);
  }
  throw new Error(`timed out waiting for ${what}`);
}

interface Outcome {
  /** HTTP status, or 0 when no answer came (timeout, connection error). */
  status: number;
  startedAt: number;
  id?: string;
  retryAfter?: string | null;
  error?: string;
}

/** One request with the client timeout; never throws. */
async function call(url: string, init: RequestInit): Promise<Outcome> {
  const startedAt = Date.now();
  try {
    const response = await fetch(url, { ...init, signal: AbortSignal.timeout(CLIENT_TIMEOUT_MS) });
    const text = await response.text();
    const body = text && (response.headers.get('content-type') ?? '').includes('json') ? JSON.parse(text) : undefined;
    return { status: response.status, startedAt, id: body?.id, retryAfter: response.headers.get('retry-after') };
  } catch (error) {
    // Past CLIENT_TIMEOUT_MS the signal aborts the request: a TimeoutError here is an answer that never came.
    return { status: 0, startedAt, error: `${(error as Error).name}: ${(error as Error).message}` };
  }
}

describe('fault tolerance under load (real PostgreSQL and RabbitMQ)', function () {
  this.timeout(600_000);
  let t: TestPlatform;
  let owner: Tenant;
  let demo: DemoModelServer;
  let version: string;
  let queueName: string;
  let amqpUrl: string;
  const base = () => `/api/model/iris-classifier/version/${version}`;

  before(async () => {
    amqpUrl = requireEnv('TEST_AMQP_URL', 'rabbitmq');
    await sharedDatabaseUrl(); // fails with a message when TEST_DATABASE_URL is not set
    queueName = unique('dy-faults');
    // A lease well above a database restart: the executor waits the outage out instead of handing the work over.
    t = await startTestPlatform({ amqpUrl, queueName, executorLeaseSeconds: 30, maxInFlight: 64 });
    version = unique('faults');
    demo = createDemoModelServer({ version, inferenceDelayMs: 5 });
    const { url } = await demo.listen(0, '127.0.0.1');
    owner = await tenant(t);
    await registeredIris(t, owner, url, version);
  });

  after(async () => {
    // Whatever happened above, leave both services running for the next tests.
    await Promise.allSettled([service('postgres', 'start'), service('rabbitmq', 'start')]);
    await demo?.close();
    await t?.close();
    await deleteWorkQueue(amqpUrl, queueName);
  });

  async function sessions(count: number): Promise<string[]> {
    const ids: string[] = [];
    for (let i = 0; i < count; i++) {
      const reply = await t.public.post(`${base()}/session`, { token: owner.token });
      expect(reply.status, reply.text).to.equal(201);
      ids.push(reply.body.id);
    }
    return ids;
  }

  const invoke = (session: string) =>
    call(`${t.public.baseUrl}${base()}/session/${session}/invocation`, {
      method: 'POST',
      headers: { authorization: `Bearer ${owner.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ type: 'PREDICT', request: { type: 'FEATURES', body: IRIS } }),
    });

  /** `workers` clients invoking back to back until `keepGoing` says stop, each outcome also handed to `seen`. */
  async function closedLoop(ids: string[], workers: number, keepGoing: (sent: number) => boolean, seen: (outcome: Outcome) => void = () => undefined): Promise<Outcome[]> {
    const outcomes: Outcome[] = [];
    let sent = 0;
    await Promise.all(
      Array.from({ length: workers }, async (_, w) => {
        while (keepGoing(sent)) {
          sent += 1;
          const outcome = await invoke(ids[(sent + w) % ids.length]!);
          outcomes.push(outcome);
          seen(outcome);
        }
      }),
    );
    return outcomes;
  }

  async function statuses(ids: string[]): Promise<Map<string, string>> {
    const rows = (await t.platform.db('invocations').whereIn('id', ids).select('id', 'status')) as Array<{ id: string; status: string }>;
    return new Map(rows.map((row) => [row.id, row.status]));
  }

  /** Every row of this model version: all final, and the model server ran exactly one call per COMPLETED row. */
  async function expectEachRanOnce(accepted: string[]) {
    const key = `iris-classifier:${version}`;
    await until(async () => [...(await statuses(accepted)).values()].every((s) => s === 'COMPLETED' || s === 'ERROR'), 'every accepted invocation to finish');
    await until(async () => {
      const open = await t.platform.db('invocations as i').join('models as m', 'm.id', 'i.model_id').where({ 'm.version': version }).whereIn('i.status', ['QUEUED', 'IN_PROGRESS']).count('* as n').first();
      return Number((open as { n: number }).n) === 0;
    }, 'every invocation of the model (also those whose client saw an error) to finish');
    const found = await statuses(accepted);
    const failed = (await t.platform.db('invocations').whereIn('id', accepted).where({ status: 'ERROR' }).select('error')) as Array<{ error: string }>;
    expect(failed.map((row) => row.error), 'why invocations failed').to.deep.equal([]);
    expect(found.size, 'accepted invocations in the database').to.equal(accepted.length);
    expect([...found.values()].filter((s) => s !== 'COMPLETED'), 'statuses other than COMPLETED').to.deep.equal([]);
    const completed = (await t.platform.db('invocations as i').join('models as m', 'm.id', 'i.model_id').where({ 'm.version': version, 'i.status': 'COMPLETED' }).count('* as n').first()) as { n: number };
    expect(demo.stats()[key] ?? 0, 'model server calls = COMPLETED invocations').to.equal(Number(completed.n));
  }

  it('stops RabbitMQ for 10 s during a burst of 500 invocations: all accepted, each runs exactly once after it returns', async () => {
    const executor = await startExecutor(t.platform);
    try {
      const ids = await sessions(16);
      let stopped: Promise<number> | undefined;
      const burst = closedLoop(ids, 16, (sent) => {
        if (sent === 50) stopped ??= service('rabbitmq', 'stop').then(() => Date.now());
        return sent < 500;
      });
      const outcomes = await burst;
      const downSince = await stopped!;
      expect(outcomes.filter((o) => o.status !== 201).map((o) => o.status || o.error), 'the API does not need the broker to accept').to.deep.equal([]);
      await sleep(Math.max(0, downSince + 10_000 - Date.now()));
      await service('rabbitmq', 'start');
      await expectEachRanOnce(outcomes.map((o) => o.id!));
      expect(outcomes).to.have.length(500);
    } finally {
      await executor.close();
    }
  });

  it('restarts PostgreSQL during load: every 201 reaches one final status, each ran exactly once, the API recovers by itself', async () => {
    const executor = await startExecutor(t.platform);
    try {
      const ids = await sessions(8);
      // The restart starts after the 50th request, and the load goes on until the API has accepted again
      // (16 invocations sent after the restart returned), not for a set time.
      let restart: Promise<void> | undefined;
      let restartedAt = Infinity;
      let acceptedSinceRestart = 0;
      const giveUpAt = Date.now() + 120_000;
      const outcomes = await closedLoop(
        ids,
        8,
        (sent) => {
          if (sent === 50) restart ??= service('postgres', 'restart').then(() => void (restartedAt = Date.now()));
          return restartedAt === Infinity || (acceptedSinceRestart < 16 && Date.now() < giveUpAt);
        },
        (outcome) => void (outcome.status === 201 && outcome.startedAt > restartedAt && (acceptedSinceRestart += 1)),
      );
      await restart;
      const unanswered = outcomes.filter((o) => o.status === 0);
      expect(unanswered.map((o) => o.error), 'requests without an answer').to.deep.equal([]);
      expect([...new Set(outcomes.map((o) => o.status))].filter((s) => s !== 201 && s !== 503), 'statuses other than 201 and 503').to.deep.equal([]);
      expect(outcomes.filter((o) => o.status === 503).every((o) => o.retryAfter), '503 carries Retry-After').to.equal(true);
      expect(acceptedSinceRestart, 'accepted again after the restart, without a restart of the API').to.be.at.least(16);
      await expectEachRanOnce(outcomes.filter((o) => o.status === 201).map((o) => o.id!));
    } finally {
      await executor.close();
    }
  });

  it('answers 503 with Retry-After while PostgreSQL is down, before the client gives up, and recovers by itself', async () => {
    const [session] = await sessions(1);
    await service('postgres', 'stop');
    const probes: Array<Outcome & { readiness?: boolean }> = [];
    try {
      const downUntil = Date.now() + 3_000;
      const auth = { authorization: `Bearer ${owner.token}` };
      while (Date.now() < downUntil) {
        probes.push(
          ...(await Promise.all([
            invoke(session!),
            call(`${t.public.baseUrl}/api/model`, { headers: auth }),
            call(`${t.private.baseUrl}/api/deployment`, { headers: auth }),
            call(`${t.auth.baseUrl}/api/auth/workspace`, { headers: auth }),
            call(`${t.public.baseUrl}/readyz`, {}).then((o) => ({ ...o, readiness: true })),
          ])),
        );
      }
    } finally {
      await service('postgres', 'start');
    }
    expect(probes.length).to.be.greaterThan(5);
    // Never hangs: a probe unanswered at the client timeout is aborted by its signal, and shows here as a TimeoutError.
    expect([...new Set(probes.map((p) => p.status || p.error))], 'every probe answered 503').to.deep.equal([503]);
    expect(probes.filter((p) => !p.retryAfter && !p.readiness).length, '503 of the API carries Retry-After').to.equal(0);
    // No restart of anything: the same servers answer again on their own.
    await until(async () => (await t.public.get('/api/model', { token: owner.token })).status === 200, 'the public server to recover', 60_000);
    expect((await invoke(session!)).status).to.equal(201);
  });

  it('refuses load beyond capacity explicitly at 1.5× the saturation rate: every request is answered 201, 429 or 503, none times out', async () => {
    const ids = await sessions(16);
    // Saturation: as many invocations per second as 32 clients back to back get.
    const measureFor = 3_000;
    const measuredSince = Date.now();
    const saturated = await closedLoop(ids, 32, () => Date.now() < measuredSince + measureFor);
    const rate = saturated.filter((o) => o.status === 201).length / (measureFor / 1000);
    expect(rate, 'saturation rate').to.be.greaterThan(0);
    // Open loop at 1.5×: requests leave on schedule whether or not earlier ones were answered.
    const offered = Math.ceil(rate * 1.5);
    const runFor = 5_000;
    const pending: Array<Promise<Outcome>> = [];
    const since = Date.now();
    for (let elapsed = 0; elapsed < runFor; elapsed = Date.now() - since) {
      const due = Math.floor((elapsed / 1000) * offered);
      while (pending.length < due) pending.push(invoke(ids[pending.length % ids.length]!));
      await sleep(5);
    }
    const outcomes = await Promise.all(pending);
    const counts = outcomes.reduce<Record<string, number>>((acc, o) => ({ ...acc, [o.status || `no answer: ${o.error}`]: (acc[o.status || `no answer: ${o.error}`] ?? 0) + 1 }), {});
    expect(Object.keys(counts).filter((k) => !['201', '429', '503'].includes(k)), `outcomes at ${offered}/s: ${JSON.stringify(counts)}`).to.deep.equal([]);
    expect(outcomes.filter((o) => o.status !== 201).every((o) => o.retryAfter), 'refusals carry Retry-After').to.equal(true);
  });
});
