import { expect } from 'chai';
import { unique, type TestPlatform } from '../support/platform.js';
import { registeredIris, type Tenant } from '../support/fixtures.js';
import { until } from '../support/until.js';
import { countingModelServer, inferenceKey, type CountingModelServer, type ManagedProcess } from '../support/model-servers.js';
import { exitOf } from '../support/didyma-process.js';
import { InvocationAudit } from '../support/invocation-audit.js';
import { AuditedRun } from '../support/audited-run.js';
import { openEventStream, statusesOf, type EventStream } from '../support/event-stream-client.js';
import { startWebhookReceiver } from '../support/webhook-receiver.js';

// An executor killed with SIGKILL in the middle of a load, while it holds runs
// and has model calls in flight: each of its runs must be taken over by the
// other executor once its lease runs out, nothing may be lost, no result may
// be accepted twice, and the model is called at least once per invocation and
// at most once per lease (docs/decisions.md, "Delivery guarantee"). Each
// session's event stream, followed throughout, must tell every invocation's
// statuses, the take-overs included, and its completion exactly once; a
// webhook receiver must be told of every completion under one webhook-id each
// (a delivery the dead executor held goes again with the same id).

const TOTAL = 1200;
const CONCURRENCY = 8;
/** Long enough that the survivor renews in time on a loaded host (two lanes of the suite on two cores). */
const LEASE_SECONDS = 10;
/** Slow enough that both executors keep their model calls busy. */
const MODEL_DELAY_MS = 200;
/** Bounds of the waits: generous, the machine may be slow and shared. */
const WAIT_MS = 300_000;

/** Features unique to the i-th invocation, so the model server counts its calls one by one. */
const features = (i: number) => ({ sepal_length: 4 + i / 1000, sepal_width: 3.5, petal_length: 1.4, petal_width: 0.2 });

describe('an executor killed with SIGKILL under load (real PostgreSQL and RabbitMQ)', function () {
  this.timeout(900_000);
  let run: AuditedRun;
  let t: TestPlatform;
  let owner: Tenant;
  let model: CountingModelServer;
  let audit: InvocationAudit;
  let modelId: number;
  const base = () => run.base();

  before(async () => {
    // The API servers and their relay only: every run happens in the two executor processes.
    run = await AuditedRun.start('kill', MODEL_DELAY_MS, { maxInFlight: 256, maxEventStreamsPerUser: 16 }); // a stream on each of its 16 sessions
    ({ t, owner, model, audit, modelId } = run);
  });

  after(() => run?.close());

  /** An executor process whose database writes the audit names `name`. */
  const executor = (name: string, env: Record<string, string> = {}): ManagedProcess =>
    run.spawn(name, ['executor'], {
      DIDYMA_EXECUTOR_CONCURRENCY: String(CONCURRENCY),
      DIDYMA_EXECUTOR_LEASE_SECONDS: String(LEASE_SECONDS),
      DIDYMA_SWEEP_INTERVAL_MS: '200',
      DIDYMA_EXECUTOR_PORT: '0',
      ...env,
    });

  const count = async (where: string) => Number(((await t.platform.db.raw(`select count(*)::int as n from invocations where model_id = ? and ${where}`, [modelId])).rows[0] as { n: number }).n);

  it(`loses none of ${TOTAL} invocations nor their events, accepts no result twice, takes over every run of the dead executor and calls the model at most once per lease`, async () => {
    const doomed = executor('doomed');
    const survivor = executor('survivor');
    const sessions: string[] = [];
    for (let i = 0; i < 16; i++) sessions.push((await t.public.post(`${base()}/session`, { token: owner.token })).body.id as string);
    const receiver = await startWebhookReceiver();
    const hook = await t.private.post('/api/webhook', { token: owner.token, json: { url: `${receiver.url}/hooks`, events: ['invocation.completed'] } });
    expect(hook.status, hook.text).to.equal(201);
    const streams: EventStream[] = await Promise.all(sessions.map((session) => openEventStream(`${t.public.baseUrl}${base()}/session/${session}/events`, owner.token)));

    /** Accepted invocation id → the key of its model call. */
    const accepted = new Map<string, string>();
    let sent = 0;
    const load = Promise.all(
      sessions.map(async (session) => {
        while (sent < TOTAL) {
          const flower = features(sent++);
          const reply = await t.public.post(`${base()}/session/${session}/invocation`, { token: owner.token, json: { type: 'PREDICT', request: { type: 'FEATURES', body: JSON.stringify(flower) } } });
          expect(reply.status, reply.text).to.equal(201);
          accepted.set(reply.body.id as string, inferenceKey(flower));
        }
      }),
    );
    // Each executor makes at most CONCURRENCY model calls at once: more in flight means the doomed one has some.
    // The check's last step is synchronous and the kill follows it at once, so none of them is answered in between.
    await until(async () => (await count(`status = 'COMPLETED'`)) >= TOTAL / 4 && model.inProgress() > CONCURRENCY, 'a quarter done, with model calls of both executors in flight', WAIT_MS);
    doomed.child.kill('SIGKILL');
    const callsInFlightAtKill = model.inProgress();
    await load;
    await until(async () => (await count(`status in ('QUEUED', 'IN_PROGRESS')`)) === 0, 'every invocation to finish', WAIT_MS);
    expect((await exitOf(doomed, WAIT_MS)).signal, 'the doomed executor').to.equal('SIGKILL');
    expect(survivor.running, `the surviving executor is still running:\n${survivor.tail()}`).to.equal(true);

    // Nothing lost: every accepted invocation COMPLETED.
    expect(accepted.size, 'accepted').to.equal(TOTAL);
    const statuses = (await t.platform.db('invocations').where({ model_id: modelId }).select('id', 'status')) as Array<{ id: string; status: string }>;
    expect(statuses.filter((row) => row.status !== 'COMPLETED'), 'lost: an accepted invocation not COMPLETED').to.deep.equal([]);
    expect(statuses.map((row) => row.id).sort(), 'the invocations of the model are the accepted ones').to.deep.equal([...accepted.keys()].sort());

    // Nothing accepted twice: no write under a stale lease, one move into a final status each.
    expect(await audit.staleWrites(), 'writes under a stale lease').to.deep.equal([]);
    const finals = await audit.finals();
    const notOnce = [...accepted.keys()].filter((id) => finals.get(id)?.length !== 1);
    expect(notOnce.map((id) => ({ id, finals: finals.get(id) })), 'invocations not finished exactly once').to.deep.equal([]);

    // The dead executor held work, and each of its runs was taken over by the survivor under a later lease, which finished it.
    const held = await audit.heldBy('doomed');
    expect(held.size, 'runs the killed executor held').to.be.greaterThan(0);
    const claims = await audit.claims();
    for (const [id, lease] of held) {
      const later = (claims.get(id) ?? []).filter((claim) => claim.lease > lease);
      expect(later.map((claim) => claim.writer), `claims of ${id} after the dead executor's lease ${lease}`).to.include('survivor');
      const [final] = finals.get(id)!;
      expect({ writer: final!.writer, lease: final!.old_attempts }, `the final write of ${id}`).to.deep.equal({ writer: 'survivor', lease: Math.max(...later.map((claim) => claim.lease)) });
    }
    expect(await audit.heldBy('survivor'), 'runs the survivor left unfinished').to.have.property('size', 0);

    // The event streams lost nothing: every invocation's statuses, its completion once, and the take-overs.
    const received = () => streams.flatMap((stream) => stream.received);
    await until(async () => [...accepted.keys()].every((id) => statusesOf(received(), id).includes('COMPLETED')), 'every completion on the event streams', WAIT_MS);
    await Promise.all(streams.map((stream) => stream.close()));
    const told = [...accepted.keys()].map((id) => ({ id, statuses: statusesOf(received(), id) }));
    const untold = told.filter(({ statuses }) => statuses[0] !== 'QUEUED' || statuses.at(-1) !== 'COMPLETED' || statuses.filter((status) => status === 'COMPLETED').length !== 1);
    expect(untold, 'invocations whose stream did not go from QUEUED to one COMPLETED').to.deep.equal([]);
    const takenOver = told.filter(({ id }) => held.has(id));
    expect(takenOver.filter(({ statuses }) => statuses.filter((status) => status === 'IN_PROGRESS').length < 2), 'take-overs the streams did not tell').to.deep.equal([]);

    // The webhooks lost nothing either: one webhook-id per completion, each answered 2xx.
    const webhookIdsOf = () => {
      const ids = new Map<string, Set<string>>();
      for (const request of receiver.received.filter((r) => r.status < 300)) {
        const invocation = (JSON.parse(request.body) as { data: { invocation_id: string } }).data.invocation_id;
        ids.set(invocation, (ids.get(invocation) ?? new Set()).add(request.headers['webhook-id']!));
      }
      return ids;
    };
    await until(async () => [...accepted.keys()].every((id) => webhookIdsOf().has(id)), 'a webhook for every completion', WAIT_MS);
    await receiver.close();
    const hooked = webhookIdsOf();
    expect([...accepted.keys()].filter((id) => hooked.get(id)?.size !== 1), 'completions told under more than one webhook-id').to.deep.equal([]);

    // Towards the model: at least once, at most once per lease; exactly once for every run no executor died holding.
    const calls = [...accepted].map(([id, key]) => ({ id, calls: model.calls(key), leases: claims.get(id)?.length ?? 0, held: held.has(id) }));
    expect(calls.filter((c) => c.calls < 1 || c.calls > c.leases), 'invocations called never, or more often than they were claimed').to.deep.equal([]);
    expect(calls.filter((c) => !c.held && (c.leases !== 1 || c.calls !== 1)), 'invocations the killed executor did not hold, not claimed and called exactly once').to.deep.equal([]);
    expect(calls.filter((c) => c.held && c.calls > 2), 'runs of the dead executor called more than twice').to.deep.equal([]);
    const repeated = calls.filter((c) => c.calls === 2);
    expect(repeated.every((c) => c.held), 'calls repeated only for runs of the dead executor').to.equal(true);
    // Its calls in flight at the kill were made again: the model server cannot be told a caller died.
    expect(repeated.length, 'model calls of the dead executor made again').to.be.greaterThan(0);
    expect(model.total(), 'model calls in all').to.equal(TOTAL + repeated.length);
    survivor.child.kill('SIGTERM');
    expect(await exitOf(survivor, WAIT_MS), `the survivor's exit on SIGTERM:\n${survivor.tail()}`).to.deep.equal({ code: 0, signal: null });
    console.log(
      `      SIGKILL of one of two executors holding ${held.size} runs (${callsInFlightAtKill} model calls in flight): ` +
        `0 lost, 0 accepted twice, every run taken over; ${repeated.length} model calls made twice, all others once`,
    );
  });
  it('refuses the results of an executor paused past its lease (SIGSTOP, then SIGCONT): its runs are taken over and finished once', async () => {
    const PAUSED_CONCURRENCY = 4;
    const PAUSED_LEASE_SECONDS = 3;
    const stopVersion = unique('stop');
    // Slow enough that the other executor is still running a run when the paused one wakes up with its stale result.
    const slow = await countingModelServer(stopVersion, 1_500);
    const stopModel = await registeredIris(t, owner, slow.url, stopVersion);
    const stopAudit = await InvocationAudit.install(t.platform.db, stopModel);
    try {
      const path = `/api/model/iris-classifier/version/${stopVersion}`;
      const session = (await t.public.post(`${path}/session`, { token: owner.token })).body.id as string;
      const accepted = new Map<string, string>();
      for (let i = 0; i < 16; i++) {
        const flower = features(i);
        const reply = await t.public.post(`${path}/session/${session}/invocation`, { token: owner.token, json: { type: 'PREDICT', request: { type: 'FEATURES', body: JSON.stringify(flower) } } });
        expect(reply.status, reply.text).to.equal(201);
        accepted.set(reply.body.id as string, inferenceKey(flower));
      }
      // Its model calls outlive the pause (no client timeout fires first when it wakes up).
      const settings = { DIDYMA_EXECUTOR_CONCURRENCY: String(PAUSED_CONCURRENCY), DIDYMA_EXECUTOR_LEASE_SECONDS: String(PAUSED_LEASE_SECONDS), DIDYMA_UPSTREAM_TIMEOUT_MS: '120000' };
      const paused = executor('paused', settings);
      await until(async () => (await stopAudit.heldBy('paused')).size > 0 && slow.inProgress() === PAUSED_CONCURRENCY, 'the executor to hold runs with model calls in flight', WAIT_MS);
      paused.child.kill('SIGSTOP');
      const held = await stopAudit.heldBy('paused');
      executor('other', settings);
      await until(
        async () => {
          const claims = await stopAudit.claims();
          return [...held].every(([id, lease]) => (claims.get(id) ?? []).some((claim) => claim.writer === 'other' && claim.lease > lease));
        },
        "every run of the paused executor to be claimed by the other under a later lease",
        WAIT_MS,
      );
      paused.child.kill('SIGCONT');
      // It wakes up with model answers for leases it lost: it tries to commit them and must be refused.
      await until(async () => /result refused/.test(paused.tail(400)), 'the woken executor to have a stale result refused', WAIT_MS);
      await until(async () => (await t.platform.db('invocations').where({ model_id: stopModel }).whereIn('status', ['QUEUED', 'IN_PROGRESS']).count({ n: '*' }))[0]!.n === 0, 'every invocation to finish', WAIT_MS);
      expect(paused.running, `the woken executor still runs:\n${paused.tail()}`).to.equal(true);

      expect(await stopAudit.staleWrites(), 'writes under a stale lease').to.deep.equal([]);
      const finals = await stopAudit.finals();
      expect([...accepted.keys()].filter((id) => finals.get(id)?.length !== 1), 'invocations not finished exactly once').to.deep.equal([]);
      expect([...held.keys()].map((id) => finals.get(id)![0]!.writer), 'the runs taken over, finished by the executor that took them').to.deep.equal([...held.keys()].map(() => 'other'));
      const claims = await stopAudit.claims();
      const calls = [...accepted].map(([id, key]) => ({ id, calls: slow.calls(key), leases: claims.get(id)?.length ?? 0 }));
      expect(calls.filter((c) => c.calls < 1 || c.calls > c.leases), 'invocations called never, or more often than they were claimed').to.deep.equal([]);
      console.log(`      an executor paused past its lease with ${held.size} runs: all taken over, its stale results refused, each invocation finished once`);
    } finally {
      await stopAudit.drop();
      await slow.close();
    }
  });
});
