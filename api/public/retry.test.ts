import type http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { startExecutor } from '../../executor/start.js';
import { createHttpServer } from '../../infra/http/http-server.js';
import { startTestPlatform, unique, type TestPlatform } from '../../test/support/platform.js';
import { IRIS, colleague, demoDeployment, filesystemStorage, modelPayload, startDemoModelServer, tenant, upload, type Tenant } from '../../test/support/fixtures.js';
import { until } from '../../test/support/until.js';

/** A model server in front of the demo one whose inferences answer 502, naming an internal address, while `broken`. */
interface FlakyServer {
  url: string;
  broken: boolean;
  /** Inference calls it received. */
  calls: number;
  close(): Promise<void>;
}

async function flakyFront(target: string): Promise<FlakyServer> {
  const front = { broken: true, calls: 0 } as FlakyServer;
  const server: http.Server = createHttpServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    if (req.method === 'POST' && req.url?.endsWith('/infer')) {
      front.calls++;
      // A gateway's 502: transient, and not repeated by the HTTP client for a POST.
      if (front.broken) return void res.writeHead(502, { 'content-type': 'text/plain' }).end(`no healthy upstream at ${target}/v2`);
    }
    const answer = await fetch(`${target}${req.url}`, { method: req.method, headers: { 'content-type': req.headers['content-type'] ?? 'application/json' }, body: chunks.length ? Buffer.concat(chunks) : undefined });
    res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/json' }).end(Buffer.from(await answer.arrayBuffer()));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  front.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  front.close = () => new Promise((resolve) => server.close(() => resolve()));
  return front;
}

describe('retry policies: a model’s own attempts and failures retried, every attempt recorded, and re-runs', function () {
  this.timeout(120_000);
  let t: TestPlatform;
  let executor: Awaited<ReturnType<typeof startExecutor>>;
  let demo: Awaited<ReturnType<typeof startDemoModelServer>>;
  const fronts: FlakyServer[] = [];

  before(async () => {
    t = await startTestPlatform({ executorConcurrency: 2 });
    executor = await startExecutor(t.platform);
    demo = await startDemoModelServer('*');
  });
  afterEach(async () => {
    for (const front of fronts.splice(0)) await front.close();
  });
  after(async () => {
    await executor?.close();
    await demo?.close();
    await t?.close();
  });

  interface Served {
    owner: Tenant;
    front: FlakyServer;
    path: string;
    registered: Record<string, unknown>;
  }

  /** A tenant's iris-classifier behind a flaky front, registered with `extra` (a retry policy…), and an OPEN session of it. */
  async function served(extra: Record<string, unknown> = {}): Promise<Served> {
    const front = await flakyFront(demo.url);
    fronts.push(front);
    const owner = await tenant(t);
    const version = unique('v');
    await demoDeployment(t.private, owner.token, front.url);
    const card = await upload(t.private, owner.token, await filesystemStorage(t.private, owner.token), '# Iris');
    const reply = await t.private.post('/api/platform_model', { token: owner.token, json: modelPayload('iris-classifier', version, card.file_id, extra) });
    expect(reply.status, reply.text).to.equal(201);
    const model = `/api/model/iris-classifier/version/${version}`;
    const session = await t.public.post(`${model}/session`, { token: owner.token });
    return { owner, front, path: `${model}/session/${session.body.id as string}`, registered: reply.body[0] };
  }

  const invoke = async ({ owner, path }: Served) => {
    const reply = await t.public.post(`${path}/invocation`, { token: owner.token, json: { type: 'PREDICT', request: { type: 'FEATURES', body: IRIS } } });
    expect(reply.status, reply.text).to.equal(201);
    return reply.body.id as string;
  };
  const read = async ({ owner, path }: Served, id: string) => (await t.public.get(`${path}/invocation/${id}`, { token: owner.token })).body;
  const finished = async (at: Served, id: string) => {
    await until(async () => ['COMPLETED', 'ERROR'].includes((await read(at, id)).status), 'the invocation to finish');
    return read(at, id);
  };
  const retry = ({ owner, path }: Served, id: string, token = owner.token) => t.public.post(`${path}/invocation/${id}/retry`, { token });

  it('a model with max_attempts 2 fails after exactly 2 attempts, both recorded without internal addresses', async () => {
    const at = await served({ retry_policy: { max_attempts: 2, backoff_ms: 0 } });
    expect(at.registered.retry_policy).to.deep.equal({ max_attempts: 2, backoff_ms: 0, backoff_multiplier: 2, retry_on: ['unreachable', 'timeout', 'server_error'] });
    const failed = await finished(at, await invoke(at));
    expect(failed.status).to.equal('ERROR');
    expect(failed.error).to.match(/^Failed after 2 attempts: /);
    expect(at.front.calls).to.equal(2);
    expect(failed.attempts.map((attempt: { attempt: number; outcome: string }) => [attempt.attempt, attempt.outcome])).to.deep.equal([
      [1, 'RETRY'],
      [2, 'ERROR'],
    ]);
    for (const attempt of failed.attempts) {
      expect(attempt.error).to.contain('HTTP 502');
      expect(attempt.error).to.not.match(/127\.0\.0\.1|https?:\/\//);
      expect(attempt.executor).to.be.a('string').and.not.equal('');
      expect(Date.parse(attempt.ended_at)).to.be.at.least(Date.parse(attempt.started_at));
    }
    // The list leaves the attempts out: only the single read has them.
    const listed = await t.public.get(`${at.path}/invocation`, { token: at.owner.token });
    expect(listed.body[0]).to.not.have.property('attempts');
  });

  it('retry_on [] makes a transient failure final at once', async () => {
    const at = await served({ retry_policy: { retry_on: [] } });
    const failed = await finished(at, await invoke(at));
    expect(failed.status).to.equal('ERROR');
    expect(failed.error).to.not.match(/^Failed after/);
    expect(failed.attempts.map((attempt: { outcome: string }) => attempt.outcome)).to.deep.equal(['ERROR']);
    expect(at.front.calls).to.equal(1);
  });

  it('re-runs an ERROR invocation once the model server is fixed: COMPLETED, its three attempts kept', async () => {
    const at = await served({ retry_policy: { max_attempts: 2, backoff_ms: 0 } });
    const id = await invoke(at);
    expect((await finished(at, id)).status).to.equal('ERROR');
    at.front.broken = false;
    const requeued = await retry(at, id);
    expect(requeued.status, requeued.text).to.equal(200);
    expect(requeued.body).to.include({ id, error: null });
    expect(requeued.body.attempts).to.have.length.at.least(2);
    const done = await finished(at, id);
    expect(done.status).to.equal('COMPLETED');
    expect(done.attempts.map((attempt: { attempt: number; outcome: string }) => [attempt.attempt, attempt.outcome])).to.deep.equal([
      [1, 'RETRY'],
      [2, 'ERROR'],
      [3, 'COMPLETED'],
    ]);
    const again = await retry(at, id);
    expect(again.status).to.equal(409);
    expect(again.body.message_code).to.equal('invocation_not_failed');
  });

  it('a re-run gets the whole budget of the policy again', async () => {
    const at = await served({ retry_policy: { max_attempts: 2, backoff_ms: 0 } });
    const id = await invoke(at);
    await finished(at, id);
    expect((await retry(at, id)).status).to.equal(200);
    await until(async () => (await read(at, id)).attempts.length === 4 && (await read(at, id)).status === 'ERROR', 'the re-run to fail');
    const failed = await read(at, id);
    expect(failed.error).to.match(/^Failed after 2 attempts: /);
    expect(failed.attempts.map((attempt: { outcome: string }) => attempt.outcome)).to.deep.equal(['RETRY', 'ERROR', 'RETRY', 'ERROR']);
  });

  it('another user’s invocation is a 404, a closed session a 409, and the invocation stays as it was', async () => {
    const at = await served({ retry_policy: { retry_on: [] } });
    const id = await invoke(at);
    await finished(at, id);
    const stranger = await colleague(t, at.owner);
    expect((await retry(at, id, stranger.token)).status).to.equal(404);
    expect((await t.public.patch(`${at.path}?state=CLOSED`, { token: at.owner.token })).status).to.equal(200);
    const closed = await retry(at, id);
    expect(closed.status).to.equal(409);
    expect(closed.body.message_code).to.equal('session_closed');
    expect((await read(at, id)).status).to.equal('ERROR');
  });

  it('without a policy, a model keeps the default one; an explainer has its own', async () => {
    const at = await served();
    expect(at.registered.retry_policy).to.deep.equal({ max_attempts: 5, backoff_multiplier: 2, retry_on: ['unreachable', 'timeout', 'server_error'] });
    const { owner } = at;
    const card = await upload(t.private, owner.token, await filesystemStorage(t.private, owner.token), '# Iris');
    const version = unique('v');
    const chain = modelPayload('iris-classifier', version, card.file_id, {
      retry_policy: { max_attempts: 3 },
      explainer: modelPayload('iris-explainer', version, card.file_id, { retry_policy: { retry_on: ['timeout'], backoff_multiplier: 1.5 } }),
    });
    const reply = await t.private.post('/api/platform_model', { token: owner.token, json: chain });
    expect(reply.status, reply.text).to.equal(201);
    expect(reply.body[0].retry_policy).to.include({ max_attempts: 3 });
    expect(reply.body[0].explainer_metadata.retry_policy).to.deep.equal({ max_attempts: 5, backoff_multiplier: 1.5, retry_on: ['timeout'] });
  });

  it('refuses a policy out of its bounds with a 400, and registers nothing', async () => {
    const owner = await tenant(t);
    const front = await flakyFront(demo.url);
    fronts.push(front);
    await demoDeployment(t.private, owner.token, front.url);
    const card = await upload(t.private, owner.token, await filesystemStorage(t.private, owner.token), '# Iris');
    const bad = [{ max_attempts: 0 }, { max_attempts: 21 }, { backoff_ms: -1 }, { backoff_ms: 600_001 }, { backoff_multiplier: 0.5 }, { backoff_multiplier: 11 }, { retry_on: ['sometimes'] }, { tries: 3 }, 'often'];
    for (const policy of bad) {
      const version = unique('v');
      const reply = await t.private.post('/api/platform_model', { token: owner.token, json: modelPayload('iris-classifier', version, card.file_id, { retry_policy: policy }) });
      expect(reply.status, `${JSON.stringify(policy)}: ${reply.text}`).to.equal(400);
      expect(await t.platform.db('models').where({ version }).first(), JSON.stringify(policy)).to.equal(undefined);
    }
  });
});
