import { expect } from 'chai';
import { createDatabase, migrateLatest, type Db } from '../../infra/db/database.js';
import { startTestPlatform, unique } from '../support/platform.js';
import { registeredIris, tenant, type Tenant } from '../support/fixtures.js';
import { deleteWorkQueue, requireEnv } from '../support/services.js';
import { countingModelServer, freePorts, inferenceKey, type CountingModelServer, type ManagedProcess } from '../support/model-servers.js';
import { didymaProcess } from '../support/didyma-process.js';
import { databaseUrlOf, InvocationAudit } from '../support/invocation-audit.js';
import { startPrivatePostgres, type PrivatePostgres } from '../support/private-postgres.js';
import { postIdempotently, type Answer } from '../support/idempotent-posts.js';
import { until } from '../support/until.js';

// Nothing lost when the database goes away under load: the public server and
// an executor, each a process of its own on RabbitMQ, take and run 2,000
// invocations while their PostgreSQL (a server of this test's own: the other
// test files share theirs) is shut down and started again, then crashes and
// recovers. Clients post each invocation under an Idempotency-Key and retry it
// until it is accepted. Every accepted invocation must complete, exactly once;
// none may be accepted twice (one row per request body, whatever the retries);
// a refusal must be a 503 with Retry-After; and both processes must recover
// by themselves.

const TOTAL = 2000;
const CONCURRENCY = 16;
const SESSIONS = 16;
/** A fast model: the run is about the database, not the model. */
const MODEL_DELAY_MS = 2;
/** Long enough that clients meet the outage, short enough to keep the run short. */
const DOWN_MS = 3_000;
/** Bounds of the waits: generous, the machine may be slow and shared. */
const WAIT_MS = 180_000;
const START_MS = 180_000;

/** Features unique to the i-th invocation: its request body, and the key of its model calls. */
const features = (i: number) => ({ sepal_length: 4 + i / 1000, sepal_width: 3.5, petal_length: 1.4, petal_width: 0.2 });

describe('PostgreSQL restarted and crashed while 2,000 invocations are posted and run (real processes, RabbitMQ)', function () {
  this.timeout(900_000);
  let pg: PrivatePostgres;
  let db: Db;
  let amqpUrl: string;
  let queueName: string;
  let model: CountingModelServer;
  let owner: Tenant;
  let modelId: number;
  let audit: InvocationAudit;
  let version: string;
  let sessions: string[];
  const children: ManagedProcess[] = [];
  const base = () => `/api/model/iris-classifier/version/${version}`;

  before(async () => {
    amqpUrl = requireEnv('TEST_AMQP_URL', 'rabbitmq');
    queueName = unique('dy-db-outage');
    pg = await startPrivatePostgres();
    db = createDatabase({ url: pg.url, poolMax: 4 });
    await migrateLatest(db);
    version = unique('db-outage');
    model = await countingModelServer(version, MODEL_DELAY_MS);
    // The tenant, its model and sessions are made through an in-process platform, closed before the load.
    const t = await startTestPlatform({ amqpUrl, queueName }, undefined, { db });
    try {
      owner = await tenant(t);
      modelId = await registeredIris(t, owner, model.url, version);
      sessions = [];
      for (let i = 0; i < SESSIONS; i++) sessions.push((await t.public.post(`${base()}/session`, { token: owner.token })).body.id as string);
    } finally {
      await t.close();
    }
    audit = await InvocationAudit.install(db, modelId);
  });

  after(async () => {
    await Promise.all(children.map((child) => child.stop(0)));
    await model?.close();
    if (amqpUrl && queueName) await deleteWorkQueue(amqpUrl, queueName);
    await db?.destroy();
    await pg?.close();
  });

  /** A `didyma` process on the private database, whose writes the audit names `name`. */
  const spawn = (name: string, args: string[], env: Record<string, string>) => {
    const child = didymaProcess(name, args, { DATABASE_URL: databaseUrlOf(pg.url, name), DIDYMA_AMQP_URL: amqpUrl, DIDYMA_QUEUE_NAME: queueName, ...env });
    children.push(child);
    return child;
  };

  const count = async (where: string) => Number(((await db.raw(`select count(*)::int as n from invocations where model_id = ? and ${where}`, [modelId])).rows[0] as { n: number }).n);

  it('completes every accepted invocation exactly once, accepts none twice and refuses only with 503 and Retry-After', async () => {
    const [publicPort, executorPort] = (await freePorts(2)) as [number, number];
    const server = spawn('public', ['serve', 'public'], { DIDYMA_PUBLIC_PORT: String(publicPort) });
    const executor = spawn('executor', ['executor'], { DIDYMA_EXECUTOR_PORT: String(executorPort) });
    const publicUrl = `http://127.0.0.1:${publicPort}`;
    await server.waitReady(`${publicUrl}/readyz`, START_MS);
    await executor.waitReady(`http://127.0.0.1:${executorPort}/readyz`, START_MS);

    // The outages start when enough is accepted, whatever the machine's speed: each while invocations are both posted and run.
    let acceptedCount = 0;
    const outages: Array<{ kind: string; accepted: number; completed: number }> = [];
    let outage: Promise<void> = Promise.resolve();
    const at = (accepted: number, kind: string, act: () => Promise<void>) => {
      if (acceptedCount !== accepted) return;
      outage = outage.then(async () => {
        outages.push({ kind, accepted: acceptedCount, completed: model.total() });
        await act();
      });
    };
    const runId = unique('key');
    const load = await postIdempotently({
      url: (i) => `${publicUrl}${base()}/session/${sessions[i % SESSIONS]}/invocation`,
      token: owner.token,
      body: (i) => ({ type: 'PREDICT', request: { type: 'FEATURES', body: JSON.stringify(features(i)) } }),
      key: (i) => `${runId}-${i}`,
      total: TOTAL,
      concurrency: CONCURRENCY,
      timeoutMs: 15_000,
      // Every other first attempt is cut by the client: its retries meet the first still running, or its kept answer.
      cutFirstAttempt: (i) => i % 2 === 1,
      deadline: Date.now() + WAIT_MS,
      onAnswer: (answer) => {
        if (answer.status !== 201) return;
        acceptedCount += 1;
        at(TOTAL / 4, 'fast shutdown', () => pg.restart(DOWN_MS));
        at((TOTAL * 5) / 8, 'crash', () => pg.crash(DOWN_MS));
      },
    });
    await outage;
    await until(async () => (await count(`status in ('QUEUED', 'IN_PROGRESS')`).catch(() => -1)) === 0, 'every invocation of the model to finish', WAIT_MS);

    // Both outages happened under load, and clients met them: refused, or cut off.
    expect(outages.map((o) => o.kind), 'outages').to.deep.equal(['fast shutdown', 'crash']);
    const refused = load.answers.filter((a) => a.status === 503);
    expect(refused.length, 'POSTs refused while the database was down').to.be.greaterThan(0);

    // Refused only with 503 (or, for a retry that met its first attempt still running, 409), each with Retry-After.
    const odd = (a: Answer) => !(a.status === 201 || a.status === 0 || ((a.status === 503 || (a.status === 409 && a.attempt > 1)) && a.retryAfter));
    expect(load.answers.filter(odd), 'answers other than 201, and 503 or 409 with Retry-After').to.deep.equal([]);
    expect(load.givenUp, 'invocations never accepted').to.deep.equal([]);
    expect(load.accepted.size, 'accepted invocations').to.equal(TOTAL);

    // None accepted twice: one row per request body, each the one its key's 201 named.
    const rows = (await db('invocations').where({ model_id: modelId }).select('id', 'status', 'body')) as Array<{ id: string; status: string; body: string }>;
    const byBody = new Map<string, string[]>();
    for (const row of rows) byBody.set(row.body, [...(byBody.get(row.body) ?? []), row.id]);
    const indexOf = new Map(Array.from({ length: TOTAL }, (_, i) => [JSON.stringify(features(i)), i]));
    const twice = [...byBody].filter(([, ids]) => ids.length > 1).map(([body, ids]) => ({ ids, answers: load.answers.filter((a) => a.index === indexOf.get(body)) }));
    expect(twice, 'requests with more than one invocation, and what their client saw').to.deep.equal([]);
    expect(rows.length, 'invocations in the database').to.equal(load.accepted.size);
    const acceptedIds = new Set(load.accepted.values());
    expect(acceptedIds.size, 'distinct invocations accepted').to.equal(TOTAL);
    expect(rows.filter((row) => !acceptedIds.has(row.id)), 'invocations no 201 named').to.deep.equal([]);

    // Every accepted invocation COMPLETED, once: one move into a final status, one completed attempt, no write under a stale lease.
    expect(rows.filter((row) => row.status !== 'COMPLETED').map((row) => row.status), 'invocations not COMPLETED').to.deep.equal([]);
    const finals = await audit.finals();
    expect(rows.filter((row) => finals.get(row.id)?.length !== 1).map((row) => ({ id: row.id, finals: finals.get(row.id) })), 'invocations not finished exactly once').to.deep.equal([]);
    expect(await audit.staleWrites(), 'writes under a stale lease').to.deep.equal([]);
    const attempts = (await db('invocation_attempts as a').join('invocations as i', 'i.id', 'a.invocation_id').where('i.model_id', modelId).select('a.invocation_id', 'a.outcome')) as Array<{ invocation_id: string; outcome: string | null }>;
    const completedAttempts = new Map<string, number>();
    for (const attempt of attempts) if (attempt.outcome === 'COMPLETED') completedAttempts.set(attempt.invocation_id, (completedAttempts.get(attempt.invocation_id) ?? 0) + 1);
    expect(rows.filter((row) => completedAttempts.get(row.id) !== 1).map((row) => row.id), 'invocations without exactly one COMPLETED attempt').to.deep.equal([]);

    // The model was called for each, and at most once per lease.
    const claims = await audit.claims();
    const calls = [...load.accepted].map(([i, id]) => ({ id, calls: model.calls(inferenceKey(features(i))), leases: claims.get(id)?.length ?? 0 }));
    expect(calls.filter((c) => c.calls < 1 || c.calls > c.leases), 'invocations the model ran never, or more often than they were claimed').to.deep.equal([]);

    // What a client reads through the API says the same: the sessions hold the accepted invocations, each COMPLETED.
    const listed: Array<{ id: string; status: string }> = [];
    for (const session of sessions) {
      const page = await fetch(`${publicUrl}${base()}/session/${session}/invocation?limit=1000`, { headers: { authorization: `Bearer ${owner.token}` } });
      expect(page.status, `the invocations of session ${session}`).to.equal(200);
      listed.push(...((await page.json()) as Array<{ id: string; status: string }>));
    }
    expect(listed.map((row) => row.id).sort(), 'the invocations the API lists').to.deep.equal([...acceptedIds].sort());
    expect(listed.filter((row) => row.status !== 'COMPLETED'), 'listed invocations not COMPLETED').to.deep.equal([]);

    // Neither process was restarted: both ride the outages out.
    expect(server.running && executor.running, `both processes still run:\n${server.tail()}\n${executor.tail()}`).to.equal(true);
    const cut = load.answers.filter((a) => a.status === 0);
    const replayed = load.answers.filter((a) => a.replayed);
    const retried = calls.filter((c) => c.calls > 1).length;
    console.log(
      `      ${TOTAL} accepted through ${outages.map((o) => `a ${o.kind} at ${o.accepted} accepted, ${o.completed} run`).join(' and ')}: ` +
        `${refused.length} POSTs refused 503, ${cut.length} cut, ${replayed.length} answered again from their key; 0 lost, 0 twice; ${retried} model calls made again`,
    );
  });
});
