import type http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { startExecutor } from '../../executor/start.js';
import { createHttpServer } from '../../infra/http/http-server.js';
import { startTestPlatform, unique, type TestPlatform } from '../../test/support/platform.js';
import { IRIS, demoDeployment, filesystemStorage, modelPayload, startDemoModelServer, tenant, upload, type Tenant } from '../../test/support/fixtures.js';
import { until } from '../../test/support/until.js';
import type { AuditRow } from '../../features/audit/store.js';
import { writeInvocation } from '../../test/support/invocation-rows.js';

const FEEDBACK_SCHEMA = { type: 'object', properties: { correct: { type: 'boolean' }, score: { type: 'number' }, note: { type: 'string' } } };

/** A model server in front of a demo one: its registry and metadata answer as the demo's, every inference a 500. */
async function failingFront(target: string): Promise<{ url: string; close(): Promise<void> }> {
  const server: http.Server = createHttpServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    if (req.method === 'POST' && req.url?.endsWith('/infer')) return void res.writeHead(500, { 'content-type': 'application/json' }).end('{"error":"model crashed"}');
    const answer = await fetch(`${target}${req.url}`, { method: req.method, headers: { 'content-type': req.headers['content-type'] ?? 'application/json' }, body: chunks.length ? Buffer.concat(chunks) : undefined });
    res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/json' }).end(Buffer.from(await answer.arrayBuffer()));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

describe('guards of alias traffic policies: a tripped candidate rolled back', function () {
  this.timeout(180_000);
  let t: TestPlatform;
  let executor: Awaited<ReturnType<typeof startExecutor>>;
  let demo: Awaited<ReturnType<typeof startDemoModelServer>>;
  const closing: Array<() => Promise<unknown>> = [];
  before(async () => {
    t = await startTestPlatform({ executorConcurrency: 4 });
    executor = await startExecutor(t.platform);
    demo = await startDemoModelServer('*');
  });
  afterEach(async () => {
    for (const close of closing.splice(0)) await close();
  });
  after(async () => {
    await executor?.close();
    await demo?.close();
    await t?.close();
  });

  const aliasPath = '/api/platform_model/iris-classifier/alias/production';
  const policyPath = `${aliasPath}/policy`;
  const setPolicy = (owner: Tenant, json: unknown) => t.private.put(policyPath, { token: owner.token, json });
  const openOn = async (owner: Tenant) => {
    const reply = await t.public.post('/api/model/iris-classifier/alias/production/session', { token: owner.token });
    expect(reply.status, reply.text).to.equal(201);
    return { id: reply.body.id as string, version: reply.body.model_key.model_version as string };
  };
  const aliasIdOf = async (owner: Tenant) => (await t.platform.db('model_aliases').where({ workspace_id: owner.ws.id, alias: 'production' }).first('id')).id as number;

  /** iris-classifier v1 (production) and v2, both with a feedback schema; v2 on the server `serverOf(v2)` starts when given, else the demo server. */
  async function twoVersions(serverOf?: (v2: string) => Promise<string>) {
    const owner = await tenant(t);
    const [v1, v2] = [unique('v1'), unique('v2')];
    const card = (await upload(t.private, owner.token, await filesystemStorage(t.private, owner.token), '# Iris')).file_id;
    const v2Server = serverOf && (await serverOf(v2));
    if (v2Server) {
      // v2 only on the failing server: its deployment is the one registered when v2 is.
      await demoDeployment(t.private, owner.token, v2Server);
      expect((await t.private.post('/api/platform_model', { token: owner.token, json: modelPayload('iris-classifier', v2, card, { feedback_schema: FEEDBACK_SCHEMA }) })).status).to.equal(201);
    }
    await demoDeployment(t.private, owner.token, demo.url);
    for (const version of v2Server ? [v1] : [v1, v2]) {
      const reply = await t.private.post('/api/platform_model', { token: owner.token, json: modelPayload('iris-classifier', version, card, { feedback_schema: FEEDBACK_SCHEMA }) });
      expect(reply.status, reply.text).to.equal(201);
    }
    expect((await t.private.put(aliasPath, { token: owner.token, json: { version: v1 } })).status).to.equal(200);
    return { owner, v1, v2 };
  }

  /** A finished invocation written as the executor would, created now, in `session`. */
  async function finished(session: string, status: 'COMPLETED' | 'ERROR', extra: { type?: string; body?: string; runMs?: number } = {}) {
    const started = new Date();
    await writeInvocation(t.platform.db, session, { ...extra, status, created_at: started, started_at: started, completed_at: new Date(started.getTime() + (extra.runMs ?? 5)) });
  }

  /** Sessions opened on the alias until `count` of them run `version`. */
  async function sessionsOn(owner: Tenant, version: string, count: number): Promise<string[]> {
    const found: string[] = [];
    while (found.length < count) {
      const session = await openOn(owner);
      if (session.version === version) found.push(session.id);
    }
    return found;
  }

  const rollbacks = (owner: Tenant) => t.platform.db('model_alias_moves').where({ workspace_id: owner.ws.id, alias: 'production' }).whereNotNull('reason');

  it('rolls a failing 10% candidate back once: weight 0, a history row with its reason, an audit record, one alias.rolled_back delivery', async () => {
    // v2 only behind a front whose inferences all answer 500.
    const { owner, v1, v2 } = await twoVersions(async (version) => {
      const bad = await startDemoModelServer(version);
      const front = await failingFront(bad.url);
      closing.push(() => front.close(), () => bad.close());
      return front.url;
    });
    const hook = await t.private.post('/api/webhook', { token: owner.token, json: { url: 'http://127.0.0.1:9/hooks', events: ['alias.rolled_back'] } });
    expect(hook.status, hook.text).to.equal(201);
    const guards = { min_invocations: 8, max_error_rate: 0.05 };
    const set = await setPolicy(owner, { weights: [{ version: v1, weight: 90 }, { version: v2, weight: 10 }], guards });
    expect(set.status, set.text).to.equal(200);
    expect(set.body.guards).to.deep.equal(guards);

    const sessions = await sessionsOn(owner, v2, 8);
    const path = (session: string) => `/api/model/iris-classifier/version/${v2}/session/${session}/invocation`;
    const ids = await Promise.all(sessions.map(async (session) => [session, (await t.public.post(path(session), { token: owner.token, json: { type: 'PREDICT', request: { type: 'FEATURES', body: IRIS } } })).body.id as string] as const));
    for (const [session, id] of ids) {
      await until(async () => (await t.public.get(`${path(session)}/${id}/check_progress`, { token: owner.token })).body.status === 'ERROR', 'a failed prediction on v2', 120_000);
    }

    await t.platform.services.aliasGuards.evaluate();
    await t.platform.services.aliasGuards.evaluate();
    const policy = (await t.private.get(policyPath, { token: owner.token })).body;
    expect(policy.weights).to.deep.equal([{ version: v1, weight: 100 }, { version: v2, weight: 0 }]);
    const history = (await t.private.get(`${aliasPath}/history?limit=1`, { token: owner.token })).body;
    expect(history[0]).to.deep.include({ from_version: v1, to_version: v1, moved_by: null, to_policy: { sticky: 'session', weights: [{ version: v1, weight: 100 }, { version: v2, weight: 0 }], shadows: [], guards } });
    expect(history[0].reason).to.match(/^error rate 8\/8, 95% interval .* above max_error_rate 0\.05$/);
    expect(await rollbacks(owner)).to.have.length(1);
    const audited = (await t.platform.db<AuditRow>('audit_records').where({ request_id: history[0].request_id })) as AuditRow[];
    expect(audited.map((r) => [r.action, r.actor_type, r.actor_id, r.workspace_id, r.resource_id])).to.deep.equal([['rollBackAliasCandidate', 'platform', 'alias-guards', owner.ws.id, 'iris-classifier/production']]);
    const deliveries = await t.platform.db('webhook_deliveries').where({ workspace_id: owner.ws.id, event_type: 'alias.rolled_back' });
    expect(deliveries).to.have.length(1);
    expect(JSON.parse(deliveries[0].payload)).to.deep.include({ type: 'alias.rolled_back' });
    expect(JSON.parse(deliveries[0].payload).data).to.deep.include({ model_code: 'iris-classifier', alias: 'production', version: v2, primary_version: v1, request_id: history[0].request_id });

    // Every new session lands on the primary: 40 of a 10% split all missing v2 happen once in 67 by chance, so 60.
    const versions = new Set(await Promise.all(Array.from({ length: 60 }, async () => (await openOn(owner)).version)));
    expect([...versions]).to.deep.equal([v1]);
  });

  it('leaves a candidate within its guards, or short of min_invocations, alone; a move keeps the guards', async () => {
    const { owner, v1, v2 } = await twoVersions();
    const guards = { min_invocations: 10, max_error_rate: 0.2, max_p99_run_ms: 1000, feedback: [{ property: 'correct', min_rate: 0.5 }, { property: 'score', min_mean: 0.5 }] };
    expect((await setPolicy(owner, { weights: [{ version: v1, weight: 50 }, { version: v2, weight: 50 }], guards })).status).to.equal(200);
    const [session] = await sessionsOn(owner, v2, 1);
    // 9 errors of 9: the error guard would trip, but min_invocations is 10.
    for (let i = 0; i < 9; i++) await finished(session!, 'ERROR');
    await t.platform.services.aliasGuards.evaluate();
    expect(await rollbacks(owner)).to.have.length(0);

    // Within bounds: 9 errors of 30 is a rate of 0.3, but its Wilson lower bound (0.167) is below 0.2; fast; feedback above its floors.
    for (let i = 0; i < 21; i++) await finished(session!, 'COMPLETED');
    for (const [correct, score] of [[true, 0.9], [true, 0.8], [false, 0.7], [true, 1]] as const) await finished(session!, 'COMPLETED', { type: 'DATA_SUBMISSION', body: JSON.stringify({ correct, score }) });
    await t.platform.services.aliasGuards.evaluate();
    expect(await rollbacks(owner)).to.have.length(0);
    expect((await t.private.get(policyPath, { token: owner.token })).body.weights).to.deep.equal([{ version: v1, weight: 50 }, { version: v2, weight: 50 }]);

    // A move keeps the guards; a policy set without them has none.
    const moved = await t.private.put(aliasPath, { token: owner.token, json: { version: v2 } });
    expect(moved.body.policy).to.deep.include({ weights: [{ version: v2, weight: 100 }], guards });
    expect((await t.private.get(`${aliasPath}/history?limit=1`, { token: owner.token })).body[0].to_policy.guards).to.deep.equal(guards);
    expect((await setPolicy(owner, { weights: [{ version: v2, weight: 100 }] })).body.guards).to.equal(null);
  });

  it('trips a feedback floor on its interval, not on a few bad answers', async () => {
    const { owner, v1, v2 } = await twoVersions();
    const guards = { min_invocations: 1, feedback: [{ property: 'correct', min_rate: 0.8 }] };
    expect((await setPolicy(owner, { weights: [{ version: v1, weight: 50 }, { version: v2, weight: 50 }], guards })).status).to.equal(200);
    const [session] = await sessionsOn(owner, v2, 1);
    await finished(session!, 'COMPLETED');
    // 2 of 3 correct: the Wilson interval (0.21..0.94) still reaches 0.8.
    for (const correct of [true, true, false]) await finished(session!, 'COMPLETED', { type: 'DATA_SUBMISSION', body: JSON.stringify({ correct }) });
    await t.platform.services.aliasGuards.evaluate();
    expect(await rollbacks(owner)).to.have.length(0);
    // 2 of 8: its upper bound (0.59) is below 0.8.
    for (let i = 0; i < 5; i++) await finished(session!, 'COMPLETED', { type: 'DATA_SUBMISSION', body: JSON.stringify({ correct: false }) });
    await t.platform.services.aliasGuards.evaluate();
    const [rollback] = await rollbacks(owner);
    expect(rollback.reason).to.match(/^feedback correct rate 2\/8, 95% interval .* below min_rate 0\.8$/);
  });

  it('holds candidates to sessions of its own workspace only, and rolls back once with replicas racing', async () => {
    const { owner, v1, v2 } = await twoVersions();
    const guards = { min_invocations: 5, max_error_rate: 0.1 };
    expect((await setPolicy(owner, { weights: [{ version: v1, weight: 50 }, { version: v2, weight: 50 }], guards })).status).to.equal(200);
    const [ours] = await sessionsOn(owner, v2, 1);
    for (let i = 0; i < 20; i++) await finished(ours!, 'COMPLETED');
    // Another workspace's same alias, versions and failures count for its own policy, not for ours.
    const them = await twoVersions();
    expect((await setPolicy(them.owner, { weights: [{ version: them.v1, weight: 50 }, { version: them.v2, weight: 50 }], guards })).status).to.equal(200);
    const [theirs] = await sessionsOn(them.owner, them.v2, 1);
    for (let i = 0; i < 20; i++) await finished(theirs!, 'ERROR');
    // Three replicas at once: the alias's row lock lets one roll back, the others find the policy changed.
    await Promise.all([1, 2, 3].map(() => t.platform.services.aliasGuards.evaluate()));
    expect(await rollbacks(owner)).to.have.length(0);
    expect(await rollbacks(them.owner)).to.have.length(1);
    expect(await aliasIdOf(owner)).to.not.equal(await aliasIdOf(them.owner));
  });

  it('refuses bad guards with a 400 naming the field, writing nothing', async () => {
    const { owner, v1, v2 } = await twoVersions();
    const weights = [{ version: v1, weight: 90 }, { version: v2, weight: 10 }];
    const cases: Array<[unknown, string]> = [
      [{ min_invocations: 0 }, 'guards.min_invocations'],
      [{ max_error_rate: 1.5 }, 'guards.max_error_rate'],
      [{ feedback: [{ property: 'correct', min_rate: -0.1 }] }, 'guards.feedback[0].min_rate'],
      [{ feedback: [{ property: 'missing', min_rate: 0.5 }] }, 'guards.feedback[0].property'],
      [{ feedback: [{ property: 'score', min_rate: 0.5 }] }, 'guards.feedback[0].property'],
      [{ feedback: [{ property: 'note', min_mean: 0.5 }] }, 'guards.feedback[0].property'],
      [{ feedback: [{ property: 'correct', min_mean: 0.5 }] }, 'guards.feedback[0].property'],
      [{ feedback: [{ property: 'correct' }] }, 'guards.feedback[0]'],
    ];
    for (const [guards, field] of cases) {
      const reply = await setPolicy(owner, { weights, guards });
      expect(reply.status, `${JSON.stringify(guards)}: ${reply.text}`).to.equal(400);
      // The OpenAPI layer names an item `.0`, the service `[0]`: the same field.
      expect(reply.text.replace(/\.(\d+)\b/g, '[$1]'), JSON.stringify(guards)).to.include(field);
    }
    expect((await t.private.get(policyPath, { token: owner.token })).status).to.equal(404);
  });
});
