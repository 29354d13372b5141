import crypto from 'node:crypto';
import { expect } from 'chai';
import { startTestPlatform, type TestPlatform } from '../../test/support/platform.js';
import { colleague, demoDeployment, filesystemStorage, IRIS, modelPayload, startDemoModelServer, tenant, upload, type Tenant } from '../../test/support/fixtures.js';
import { startExecutor } from '../../executor/start.js';
import type { DemoModelServer } from '../../demo/model-server/server.js';
import { unique } from '../../test/support/platform.js';
import { until } from '../../test/support/until.js';

describe('public server: closed sessions exported as datasets', () => {
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
    const chain = modelPayload('iris-classifier', version, card.file_id, { explainer: modelPayload('iris-explainer', version, card.file_id, { need_context: true }) });
    const registered = await t.private.post('/api/platform_model', { token: owner.token, json: chain });
    expect(registered.status, registered.text).to.equal(201);
  });
  after(async () => {
    await executor.close();
    await demo.close();
    await t.close();
  });

  const base = () => `/api/model/iris-classifier/version/${version}`;

  /** A session of `who` with one explained prediction, feedback on it and a second prediction without; its invocations as the API lists them. */
  async function workedSession(who: Tenant, close = true) {
    const session = (await t.public.post(`${base()}/session`, { token: who.token })).body.id as string;
    const path = `${base()}/session/${session}`;
    const first = await t.public.post(`${path}/invocation`, { token: who.token, json: { type: 'PREDICT', request: { type: 'FEATURES', body: IRIS }, with_explanation: true } });
    // Oldest first, as the records are: the API lists newest first.
    const invocations = () => t.public.get(`${path}/invocation`, { token: who.token }).then((reply) => (reply.body as any[]).sort((a, b) => a.order - b.order));
    const completed = (count: number) => async () => {
      const items = await invocations();
      return items.length === count && items.every((i) => i.status === 'COMPLETED');
    };
    await until(completed(2), 'the prediction and its explanation');
    const feedback = await t.public.post(`${path}/invocation/${first.body.id}/feedback`, { token: who.token, json: { request: { body: '{"correct":true}' } } });
    expect(feedback.status, feedback.text).to.equal(201);
    await t.public.post(`${path}/invocation`, { token: who.token, json: { type: 'PREDICT', request: { type: 'FEATURES', body: IRIS } } });
    await until(completed(4), 'the second prediction');
    const all = await invocations();
    if (close) expect((await t.public.patch(`${path}?state=CLOSED`, { token: who.token })).status).to.equal(200);
    return { session, path, invocations: all };
  }

  const lines = (text: string) => text.split('\n').filter(Boolean).map((line) => JSON.parse(line));

  it('writes a closed session as JSON Lines whose records are the API invocations, with a manifest that checks out', async () => {
    const { session, path, invocations } = await workedSession(owner);
    const exported = await t.public.post(`${path}/dataset`, { token: owner.token, json: { storage_key: storage } });
    expect(exported.status, exported.text).to.equal(201);
    expect(exported.body).to.include({ name: `session-${session}`, version: 1, row_count: 2, storage_key: storage, workspace: owner.ws.name });
    expect(exported.body.selection).to.deep.equal({ kind: 'session', session_id: session, model_code: 'iris-classifier', model_version: version });

    const download = await t.public.get(`/api/dataset/${exported.body.id}/records`, { token: owner.token });
    expect(download.status).to.equal(200);
    expect(download.headers.get('content-type')).to.match(/^application\/x-ndjson/);
    expect(crypto.createHash('sha256').update(download.text).digest('hex')).to.equal(exported.body.sha256);
    const [predict, explanation, feedback, second] = invocations;
    const records = lines(download.text);
    expect(records.map((r) => r.invocation_id)).to.deep.equal([predict.id, second.id]);
    expect(records[0]).to.deep.include({
      session_id: session,
      order: predict.order,
      model_code: 'iris-classifier',
      model_version: version,
      type: 'PREDICT',
      request_type: 'FEATURES',
      input: predict.request.body,
      status: 'COMPLETED',
      output: predict.response,
      error: null,
      created_at: predict.created_at,
      completed_at: predict.completed_at,
    });
    expect(records[0].explanations).to.deep.equal([
      {
        invocation_id: explanation.id,
        order: explanation.order,
        related_to: predict.id,
        model_key: explanation.model_key,
        status: 'COMPLETED',
        output: explanation.response,
        error: null,
        created_at: explanation.created_at,
        completed_at: explanation.completed_at,
        feedback: [],
      },
    ]);
    expect(records[0].feedback).to.deep.equal([{ invocation_id: feedback.id, order: feedback.order, body: '{"correct":true}', created_at: feedback.created_at }]);
    expect(records[1]).to.deep.include({ explanations: [], feedback: [], output: second.response });

    const manifest = await t.public.get(`/api/dataset/${exported.body.id}/manifest`, { token: owner.token });
    expect(manifest.status).to.equal(200);
    expect(manifest.body).to.deep.include({ row_count: 2, sha256: exported.body.sha256, size: Buffer.byteLength(download.text), format: 'application/x-ndjson' });
    expect(manifest.body.dataset).to.include({ id: exported.body.id, version: 1 });
    expect(manifest.body.schema.required).to.include('explanations');
  });

  it('writes a new version for each export of a name; earlier versions stay as they were', async () => {
    const { path } = await workedSession(owner);
    const name = unique('iris');
    const first = await t.public.post(`${path}/dataset`, { token: owner.token, json: { storage_key: storage, name } });
    const second = await t.public.post(`${path}/dataset`, { token: owner.token, json: { storage_key: storage, name } });
    expect([first.body.version, second.body.version]).to.deep.equal([1, 2]);
    expect(second.body.id).to.not.equal(first.body.id);
    const listed = await t.public.get(`/api/dataset?name=${name}`, { token: owner.token });
    expect(listed.headers.get('x-total-count')).to.equal('2');
    expect(listed.body.map((d: { version: number }) => d.version)).to.deep.equal([2, 1]);
    const firstPage = await t.public.get(`/api/dataset?name=${name}&limit=1`, { token: owner.token });
    const next = /^<([^>]+)>; rel="next"$/.exec(firstPage.headers.get('link') ?? '')?.[1];
    expect(firstPage.body.map((d: { version: number }) => d.version)).to.deep.equal([2]);
    expect((await t.public.get(next!, { token: owner.token })).body.map((d: { version: number }) => d.version)).to.deep.equal([1]);
    expect((await t.public.get(`/api/dataset/${first.body.id}`, { token: owner.token })).body).to.deep.equal(first.body);
  });

  it('refuses an OPEN session with 409 and a session of someone else with 404', async () => {
    const open = await workedSession(owner, false);
    const refused = await t.public.post(`${open.path}/dataset`, { token: owner.token, json: { storage_key: storage } });
    expect(refused.status).to.equal(409);
    expect(refused.body).to.include({ message_code: 'session_open' });
    expect(refused.body.message).to.match(/CLOSED/);
    await t.public.patch(`${open.path}?state=CLOSED`, { token: owner.token });
    const member = await colleague(t, owner);
    expect((await t.public.post(`${open.path}/dataset`, { token: member.token, json: { storage_key: storage } })).status).to.equal(404);
    expect((await t.public.post(`${open.path}/dataset`, { token: owner.token, json: { storage_key: 'no-such-storage' } })).status).to.equal(404);
  });

  it('exports by filter only the caller’s closed sessions, bounded by date and feedback', async () => {
    const member = await colleague(t, owner);
    const mine = await workedSession(member);
    await workedSession(member, false);
    await workedSession(owner);
    const before = new Date(Date.now() + 60_000).toISOString();
    const json = { name: unique('feedback'), storage_key: storage, model_code: 'iris-classifier', model_version: version, created_before: before, with_feedback: true };
    const exported = await t.public.post('/api/dataset', { token: member.token, json });
    expect(exported.status, exported.text).to.equal(201);
    expect(exported.body.row_count).to.equal(1);
    const records = lines((await t.public.get(`/api/dataset/${exported.body.id}/records`, { token: member.token })).text);
    expect(records.map((r) => r.invocation_id)).to.deep.equal([mine.invocations[0].id]);

    const later = await t.public.post('/api/dataset', { token: member.token, json: { ...json, created_before: undefined, created_after: before } });
    expect(later.body.row_count).to.equal(0);
    const bad = await t.public.post('/api/dataset', { token: member.token, json: { ...json, created_after: before, created_before: before } });
    expect(bad.status).to.equal(400);
  });

  it('shows a dataset only to its author in its workspace', async () => {
    const { path } = await workedSession(owner);
    const exported = (await t.public.post(`${path}/dataset`, { token: owner.token, json: { storage_key: storage } })).body;
    const stranger = await tenant(t);
    const member = await colleague(t, owner);
    for (const who of [stranger, member]) {
      for (const suffix of ['', '/records', '/manifest']) {
        const reply = await t.public.get(`/api/dataset/${exported.id}${suffix}`, { token: who.token });
        expect(reply.status, `${suffix} ${reply.text}`).to.equal(404);
      }
      const listed = await t.public.get('/api/dataset', { token: who.token });
      expect(listed.body.map((d: { id: string }) => d.id)).to.not.include(exported.id);
    }
  });
});
