import { expect } from 'chai';
import { startTestPlatform, unique, type TestPlatform } from '../../test/support/platform.js';
import { colleague, demoDeployment, filesystemStorage, IRIS, modelPayload, startDemoModelServer, tenant, upload, type Tenant } from '../../test/support/fixtures.js';
import { startExecutor } from '../../executor/start.js';
import type { DemoModelServer } from '../../demo/model-server/server.js';

const FEEDBACK_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['correct', 'rating'],
  properties: {
    correct: { type: 'boolean' },
    rating: { type: 'integer', minimum: 1, maximum: 5 },
    evidence: { type: 'object', properties: { platform_file_id: { type: 'string' } }, fileConstraints: { mediaTypes: ['text/csv'], maxSizeMb: 0.001 } },
  },
};

describe('public server and executor: sessions, queued invocations, explanation chains, feedback', () => {
  let t: TestPlatform;
  let executor: Awaited<ReturnType<typeof startExecutor>>;
  let demo: DemoModelServer & { url: string };
  let version: string;
  let owner: Tenant;
  let storage: string;

  before(async () => {
    t = await startTestPlatform();
    executor = await startExecutor(t.platform);
    version = unique('v');
    demo = await startDemoModelServer(version);
    owner = await tenant(t);
    await demoDeployment(t.private, owner.token, demo.url);
    storage = await filesystemStorage(t.private, owner.token);
    const card = await upload(t.private, owner.token, storage, '# Iris card');
    // classifier → explainer → always-fails: the second explanation fails on purpose
    const chain = modelPayload('iris-classifier', version, card.file_id, {
      feedback_schema: FEEDBACK_SCHEMA,
      explainer: modelPayload('iris-explainer', version, card.file_id, { need_context: true, explainer: modelPayload('always-fails', version, card.file_id, { need_context: true }) }),
    });
    const registered = await t.private.post('/api/platform_model', { token: owner.token, json: chain });
    expect(registered.status, registered.text).to.equal(201);
  });
  after(async () => {
    await executor.close();
    await demo.close();
    await t.close();
  });

  const base = () => `/api/model/iris-classifier/version/${version}`;

  async function openSession(who: Tenant, path = base()) {
    const reply = await t.public.post(`${path}/session`, { token: who.token });
    expect(reply.status).to.equal(201);
    return reply.body.id as string;
  }

  async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, what: string): Promise<T> {
    for (let i = 0; i < 400; i++) {
      const value = await read();
      if (done(value)) return value;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    throw new Error(`timed out waiting for ${what}`);
  }

  it('runs a prediction with its explanation chain; each invocation keeps its own status', async () => {
    const session = await openSession(owner);
    const created = await t.public.post(`${base()}/session/${session}/invocation`, {
      token: owner.token,
      json: { type: 'PREDICT', order: 0, request: { type: 'FEATURES', body: IRIS }, with_explanation: true },
    });
    expect(created.status).to.equal(201);
    expect(created.body).to.include({ type: 'PREDICT', status: 'QUEUED', response: '', order: 0, model_key: '' });
    expect(created.body).to.not.have.property('related_to');

    const list = await until(
      async () => (await t.public.get(`${base()}/session/${session}/invocation`, { token: owner.token })).body as any[],
      (items) => items.length === 3 && items.every((i) => i.status === 'COMPLETED' || i.status === 'ERROR'),
      'the chain to finish',
    );
    const [failed, explanation, prediction] = list; // newest first
    expect(prediction).to.include({ id: created.body.id, status: 'COMPLETED', related_to: null });
    expect(JSON.parse(prediction.response).outputs[0].data).to.deep.equal(['setosa']);
    expect(explanation).to.include({ type: 'EXPLAIN', status: 'COMPLETED', related_to: prediction.id, model_key: `iris-explainer:${version}`, order: 1 });
    expect(failed).to.include({ type: 'EXPLAIN', status: 'ERROR', related_to: explanation.id, model_key: `always-fails:${version}`, response: '' });
    expect(failed.error).to.match(/fails on purpose/);
    expect(failed.error, 'the model server address stays in the logs').to.not.contain(new URL(demo.url).host);

    const related = (ids: string) => t.public.get(`${base()}/session/${session}/invocation?related_to=${ids}`, { token: owner.token });
    expect((await related(prediction.id)).body.map((i: any) => i.id)).to.deep.equal([explanation.id]);
    expect((await related(`${prediction.id},${explanation.id}`)).body.map((i: any) => i.id)).to.deep.equal([failed.id, explanation.id]);
    const malformed = await related(`${prediction.id},not-an-id`);
    expect(malformed.status).to.equal(400);
    expect(malformed.body.message).to.match(/^related_to: /);

    const progress = await t.public.get(`${base()}/session/${session}/invocation/${prediction.id}/check_progress`, { token: owner.token });
    expect(progress.body).to.deep.equal({ status: 'COMPLETED' });
    expect(demo.stats()[`iris-classifier:${version}`]).to.be.at.least(1);
  });

  it('records feedback as a COMPLETED DATA_SUBMISSION, validated fail-fast against the feedback schema', async () => {
    const session = await openSession(owner);
    const prediction = await t.public.post(`${base()}/session/${session}/invocation`, { token: owner.token, json: { type: 'PREDICT', request: { type: 'FEATURES', body: IRIS } } });
    const path = `${base()}/session/${session}/invocation/${prediction.body.id}/feedback`;
    const ok = await t.public.post(path, { token: owner.token, json: { request: { body: JSON.stringify({ correct: true, rating: 5 }) } } });
    expect(ok.status).to.equal(201);
    expect(ok.body).to.include({ type: 'DATA_SUBMISSION', status: 'COMPLETED', related_to: prediction.body.id });
    expect(ok.body.request.request_type).to.equal('FEEDBACK');

    const wrongType = await t.public.post(path, { token: owner.token, json: { request: { body: JSON.stringify({ correct: 'yes', rating: 5 }) } } });
    expect(wrongType.status).to.equal(400);
    expect(wrongType.body.message).to.match(/^feedback\.correct/);
    const range = await t.public.post(path, { token: owner.token, json: { request: { body: JSON.stringify({ correct: true, rating: 9 }) } } });
    expect(range.body.message).to.match(/^feedback\.rating/);
    const missing = await t.public.post(path, { token: owner.token, json: { request: { body: JSON.stringify({ correct: true }) } } });
    expect(missing.body.message).to.match(/^feedback\.rating/);
    const notJson = await t.public.post(path, { token: owner.token, json: { request: { body: 'great model' } } });
    expect(notJson.status).to.equal(400);
    const badFile = await t.public.post(path, { token: owner.token, json: { request: { body: JSON.stringify({ correct: true, rating: 4, evidence: { platform_file_id: '00000000-0000-4000-8000-000000000000' } }) } } });
    expect(badFile.status).to.equal(400);
    expect(badFile.body.message).to.match(/^feedback\.evidence\.platform_file_id/);
    const evidence = await upload(t.public, owner.token, storage, 'a,b\n1,2\n', 'evidence.csv', 'text/csv');
    const withFile = await t.public.post(path, { token: owner.token, json: { request: { body: JSON.stringify({ correct: false, rating: 2, evidence: { platform_file_id: evidence.file_id } }) } } });
    expect(withFile.status).to.equal(201);
    // The schema's fileConstraints hold for the file the feedback points at.
    const markdown = await upload(t.public, owner.token, storage, '# notes', 'notes.md', 'text/markdown');
    const wrongKind = await t.public.post(path, { token: owner.token, json: { request: { body: JSON.stringify({ correct: false, rating: 2, evidence: { platform_file_id: markdown.file_id } }) } } });
    expect(wrongKind.status).to.equal(400);
    expect(wrongKind.body.message).to.equal('feedback.evidence.platform_file_id: the file is text/markdown; the model accepts text/csv.');
    const large = await upload(t.public, owner.token, storage, 'a,b\n'.repeat(500), 'large.csv', 'text/csv');
    const tooLarge = await t.public.post(path, { token: owner.token, json: { request: { body: JSON.stringify({ correct: false, rating: 2, evidence: { platform_file_id: large.file_id } }) } } });
    expect(tooLarge.status).to.equal(400);
    expect(tooLarge.body.message).to.equal('feedback.evidence.platform_file_id: the file is larger than 0.001 MB.');
  });

  it('validates invocation bodies against the input schema and the model kind', async () => {
    const session = await openSession(owner);
    const path = `${base()}/session/${session}/invocation`;
    const wrong = await t.public.post(path, { token: owner.token, json: { type: 'PREDICT', request: { type: 'FEATURES', body: JSON.stringify({ sepal_length: 'long' }) } } });
    expect(wrong.status).to.equal(400);
    expect(wrong.body.message).to.match(/^request\.body/);
    const explainOnMain = await t.public.post(path, { token: owner.token, json: { type: 'EXPLAIN', request: { type: 'FEATURES', body: IRIS } } });
    expect(explainOnMain.status).to.equal(400);
    const explainerPath = `/api/model/iris-explainer/version/${version}`;
    const explainerSession = await openSession(owner, explainerPath);
    const withExplanationOnExplainer = await t.public.post(`${explainerPath}/session/${explainerSession}/invocation`, {
      token: owner.token,
      json: { type: 'EXPLAIN', request: { type: 'FEATURES', body: IRIS }, with_explanation: true },
    });
    expect(withExplanationOnExplainer.status).to.equal(400);
    const explain = await t.public.post(`${explainerPath}/session/${explainerSession}/invocation`, { token: owner.token, json: { type: 'EXPLAIN', request: { type: 'FEATURES', body: IRIS } } });
    expect(explain.status).to.equal(201);
    expect(explain.body.model_key).to.equal(`iris-explainer:${version}`);
    const badType = await t.public.post(path, { token: owner.token, json: { type: 'TRAIN', request: { type: 'FEATURES', body: IRIS } } });
    expect(badType.status).to.equal(400);
  });

  it('answers 409 on a CLOSED session until it is reopened', async () => {
    const session = await openSession(owner);
    const path = `${base()}/session/${session}`;
    const closed = await t.public.patch(`${path}?state=CLOSED`, { token: owner.token });
    expect(closed.status).to.equal(200);
    expect(closed.body.state).to.equal('CLOSED');
    const refused = await t.public.post(`${path}/invocation`, { token: owner.token, json: { type: 'PREDICT', request: { type: 'FEATURES', body: IRIS } } });
    expect(refused.status).to.equal(409);
    expect((await t.public.patch(`${path}?state=ARCHIVED`, { token: owner.token })).status).to.equal(400);
    await t.public.patch(`${path}?state=OPEN`, { token: owner.token });
    expect((await t.public.post(`${path}/invocation`, { token: owner.token, json: { type: 'PREDICT', request: { type: 'FEATURES', body: IRIS } } })).status).to.equal(201);
  });

  it('takes the new state of a session in the query or in the body, and names both places when it has neither', async () => {
    const session = await openSession(owner);
    const path = `${base()}/session/${session}`;
    const closed = await t.public.patch(path, { token: owner.token, json: { state: 'CLOSED' } });
    expect(closed.status, closed.text).to.equal(200);
    expect(closed.body.state).to.equal('CLOSED');
    const missing = await t.public.patch(path, { token: owner.token, json: {} });
    expect(missing.status).to.equal(400);
    expect(missing.body.message).to.include('?state=CLOSED').and.include('"state": "CLOSED"');
    expect((await t.public.patch(`${path}?state=OPEN`, { token: owner.token, json: { state: 'CLOSED' } })).status, 'query and body disagree').to.equal(400);
    expect((await t.public.patch(path, { token: owner.token, json: { state: 'ARCHIVED' } })).status).to.equal(400);
    expect((await t.public.patch(`${path}?state=OPEN`, { token: owner.token, json: { state: 'OPEN' } })).body.state).to.equal('OPEN');
  });

  it('wakes executors once per accepted invocation, after its commit, and not for a refused append', async () => {
    const session = await openSession(owner);
    const path = `${base()}/session/${session}`;
    const post = (who = owner) => t.public.post(`${path}/invocation`, { token: who.token, json: { type: 'PREDICT', request: { type: 'FEATURES', body: IRIS } } });
    const other = await colleague(t, owner, 'user');
    const { doorbell } = t.platform;
    const { ring } = doorbell;
    let rung = 0;
    doorbell.ring = (count = 1) => ((rung += count), ring.call(doorbell, count));
    const accepted: string[] = [];
    try {
      for (const who of [owner, other, owner]) {
        const response = await post(who);
        if (response.status === 201) accepted.push(response.body.id as string);
        else expect(response.status).to.equal(404);
      }
      await t.public.patch(`${path}?state=CLOSED`, { token: owner.token });
      expect((await post()).status).to.equal(409);
    } finally {
      doorbell.ring = ring;
    }
    expect(rung).to.equal(accepted.length);
    expect(accepted).to.have.length(2);
  });

  it("shows each user only their own sessions and invocations, and nothing across workspaces", async () => {
    const mine = await openSession(owner);
    const invocation = await t.public.post(`${base()}/session/${mine}/invocation`, { token: owner.token, json: { type: 'PREDICT', request: { type: 'FEATURES', body: IRIS } } });
    const other = await colleague(t, owner, 'user');
    const theirs = await openSession(other);
    const feedback = await t.public.post(`${base()}/session/${mine}/invocation/${invocation.body.id}/feedback`, { token: owner.token, json: { request: { body: JSON.stringify({ correct: true, rating: 5 }) } } });
    expect(feedback.status).to.equal(201);
    // Naming another user's invocation selects nothing: the filter works inside the caller's own session.
    const foreign = await t.public.get(`${base()}/session/${theirs}/invocation?related_to=${invocation.body.id}`, { token: other.token });
    expect([foreign.status, foreign.body]).to.deep.equal([200, []]);
    const sessions = await t.public.get(`${base()}/session`, { token: other.token });
    expect(sessions.body.map((s: any) => s.id)).to.deep.equal([theirs]);
    expect(sessions.body[0]).to.include({ user_id: String(other.user.id), workspace: owner.ws.name, state: 'OPEN' });
    expect(sessions.body[0].model_key).to.deep.equal({ model_code: 'iris-classifier', model_version: version });
    for (const path of [`${base()}/session/${mine}/invocation`, `${base()}/session/${mine}/invocation/${invocation.body.id}`, `${base()}/session/${mine}/invocation/${invocation.body.id}/check_progress`]) {
      expect((await t.public.get(path, { token: other.token })).status, path).to.equal(404);
    }
    expect((await t.public.post(`${base()}/session/${mine}/invocation`, { token: other.token, json: { type: 'PREDICT', request: { type: 'FEATURES', body: IRIS } } })).status).to.equal(404);
    expect((await t.public.patch(`${base()}/session/${mine}?state=CLOSED`, { token: other.token })).status).to.equal(404);

    const stranger = await tenant(t);
    expect((await t.public.get('/api/model', { token: stranger.token })).body).to.deep.equal([]);
    expect((await t.public.get(`${base()}/session`, { token: stranger.token })).status).to.equal(404);
    expect((await t.public.get(`${base()}/session/${mine}/invocation`, { token: stranger.token })).status).to.equal(404);
    expect((await t.public.post(`${base()}/session`, { token: stranger.token })).status).to.equal(404);
    expect((await t.public.get(`/api/platform_model/iris-classifier/version/${version}/model_card`, { token: stranger.token })).status).to.equal(404);
  });

  it('serves the model card to members', async () => {
    const member = await colleague(t, owner, 'user');
    const card = await t.public.get(`/api/platform_model/iris-classifier/version/${version}/model_card`, { token: member.token });
    expect(card.status).to.equal(200);
    expect(card.text).to.equal('# Iris card');
    expect(card.headers.get('content-disposition')).to.include('attachment');
  });

  it('refuses new sessions and invocations on a deleted model, and keeps its history readable to its users', async () => {
    const v = unique('v');
    const server = await startDemoModelServer(v);
    try {
      await demoDeployment(t.private, owner.token, server.url);
      const card = await upload(t.private, owner.token, storage, 'card');
      await t.private.post('/api/platform_model', { token: owner.token, json: modelPayload('iris-classifier', v, card.file_id) });
      const path = `/api/model/iris-classifier/version/${v}`;
      const session = await openSession(owner, path);
      const before = await t.public.post(`${path}/session/${session}/invocation`, { token: owner.token, json: { type: 'PREDICT', request: { type: 'FEATURES', body: IRIS } } });
      expect(before.status).to.equal(201);
      await t.private.delete(`/api/platform_model/iris-classifier/version/${v}`, { token: owner.token });
      // Its users keep the history of their sessions, read-only.
      expect((await t.public.get(`${path}/session`, { token: owner.token })).body.map((s: any) => s.id)).to.include(session);
      expect((await t.public.get(`${path}/session/${session}/invocation`, { token: owner.token })).body.map((i: any) => i.id)).to.deep.equal([before.body.id]);
      expect((await t.public.get(`${path}/session/${session}/invocation/${before.body.id}`, { token: owner.token })).status).to.equal(200);
      const stranger = await colleague(t, owner, 'user');
      expect((await t.public.get(`${path}/session/${session}/invocation`, { token: stranger.token })).status, "another user's session stays hidden").to.equal(404);
      expect((await t.public.post(`${path}/session`, { token: owner.token })).status).to.equal(404);
      expect((await t.public.post(`${path}/session/${session}/invocation`, { token: owner.token, json: { type: 'PREDICT', request: { type: 'FEATURES', body: IRIS } } })).status).to.equal(404);
      expect((await t.public.get('/api/model', { token: owner.token })).body.map((m: any) => m.model_metadata.version)).to.not.include(v);
    } finally {
      await server.close();
    }
  });
});

describe('public server and executor: file inputs and outputs', () => {
  let t: TestPlatform;
  let executor: Awaited<ReturnType<typeof startExecutor>>;
  let demo: DemoModelServer & { url: string };

  before(async () => {
    t = await startTestPlatform();
    executor = await startExecutor(t.platform);
  });
  after(async () => {
    await executor.close();
    await demo?.close();
    await t.close();
  });

  it('sends the input file to the model and writes the file it answers to the chosen storage', async () => {
    const version = unique('v');
    demo = await startDemoModelServer(version);
    const owner = await tenant(t);
    await demoDeployment(t.private, owner.token, demo.url);
    const storage = await filesystemStorage(t.private, owner.token);
    const outputs = await filesystemStorage(t.private, owner.token);
    const card = await upload(t.private, owner.token, storage, 'card');
    const fileSchema = (description: string) => ({
      type: 'file',
      description,
      schema: { type: 'object', required: ['fileId'], properties: { fileId: { type: 'string' }, outputStorageId: { type: 'string' } } },
      fileConstraints: { mediaTypes: ['text/csv'], maxSizeMb: 1 },
      contentSchema: { format: 'csv', delimiter: ',' },
    });
    const registered = await t.private.post('/api/platform_model', {
      token: owner.token,
      json: { ...modelPayload('csv-summary', version, card.file_id), input_schema: fileSchema('a CSV file'), output_schema: fileSchema('a summary CSV') },
    });
    expect(registered.status, registered.text).to.equal(201);

    const member = await colleague(t, owner, 'user');
    const csv = await upload(t.public, member.token, storage, 'a,b\n1,\n2,3\n', 'data.csv', 'text/csv');
    const path = `/api/model/csv-summary/version/${version}`;
    const session = (await t.public.post(`${path}/session`, { token: member.token })).body.id;
    const invoke = (body: object) => t.public.post(`${path}/session/${session}/invocation`, { token: member.token, json: { type: 'PREDICT', request: { type: 'OTHER', body: JSON.stringify(body) } } });

    const pdf = await upload(t.public, member.token, storage, 'x', 'doc.txt', 'text/plain');
    expect((await invoke({ fileId: pdf.file_id, outputStorageId: outputs })).status).to.equal(400);
    expect((await invoke({ fileId: csv.file_id, outputStorageId: 'nowhere' })).status).to.equal(400);
    expect((await invoke({ fileId: csv.file_id })).status).to.equal(400);

    const created = await invoke({ fileId: csv.file_id, outputStorageId: outputs });
    expect(created.status, created.text).to.equal(201);
    let done: any;
    for (let i = 0; i < 200 && done?.status !== 'COMPLETED' && done?.status !== 'ERROR'; i++) {
      await new Promise((resolve) => setTimeout(resolve, 25));
      done = (await t.public.get(`${path}/session/${session}/invocation/${created.body.id}`, { token: member.token })).body;
    }
    expect(done.status, done.error).to.equal('COMPLETED');
    const response = JSON.parse(done.response);
    expect(response.file).to.include({ file_name: 'summary.csv', content_type: 'text/csv', storage_key: outputs });
    expect(response.outputs[0]).to.include({ name: 'rows' });
    const summary = await t.public.get(`/api/storage/${outputs}/files/${response.file.file_id}`, { token: member.token });
    expect(summary.text).to.equal('column,non_empty\na,2\nb,1\n');
  });
});
