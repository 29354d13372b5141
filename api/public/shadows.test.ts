import { expect } from 'chai';
import { makeStaff, startTestPlatform, unique, type TestPlatform } from '../../test/support/platform.js';
import { demoDeployment, filesystemStorage, IRIS, modelPayload, startDemoModelServer, tenant, upload, type Tenant } from '../../test/support/fixtures.js';
import { startExecutor } from '../../executor/start.js';
import type { DemoModelServer } from '../../demo/model-server/server.js';
import { sessionsStore, type InvocationRow } from '../../features/invocations/store.js';
import { SHADOW_PRIORITY } from '../../features/invocations/shadows.js';
import { until } from '../../test/support/until.js';
import { startWebhookReceiver, type WebhookReceiver } from '../../test/support/webhook-receiver.js';

const ALIAS = '/api/platform_model/iris-classifier/alias';
const PREDICT = { type: 'PREDICT', request: { type: 'FEATURES', body: IRIS } };

/** iris-classifier at v1 and v2 in a fresh workspace, `production` on v1 sending everything to v1 and shadowing v2, `staging` on v1 without a policy. */
async function shadowedAlias(t: TestPlatform, demoUrl: string) {
  const owner = await tenant(t);
  await demoDeployment(t.private, owner.token, demoUrl);
  const storage = await filesystemStorage(t.private, owner.token);
  const card = (await upload(t.private, owner.token, storage, '# Iris')).file_id;
  const [v1, v2] = [unique('v1'), unique('v2')];
  for (const version of [v1, v2]) {
    const reply = await t.private.post('/api/platform_model', { token: owner.token, json: modelPayload('iris-classifier', version, card) });
    expect(reply.status, reply.text).to.equal(201);
  }
  for (const alias of ['production', 'staging']) expect((await t.private.put(`${ALIAS}/${alias}`, { token: owner.token, json: { version: v1 } })).status).to.equal(200);
  const policy = await t.private.put(`${ALIAS}/production/policy`, { token: owner.token, json: { weights: [{ version: v1, weight: 100 }], shadows: [v2] } });
  expect(policy.status, policy.text).to.equal(200);
  return { owner, storage, v1, v2 };
}

async function openOnAlias(t: TestPlatform, owner: Tenant, alias: string) {
  const reply = await t.public.post(`/api/model/iris-classifier/alias/${alias}/session`, { token: owner.token });
  expect(reply.status, reply.text).to.equal(201);
  return { id: reply.body.id as string, path: `/api/model/iris-classifier/version/${reply.body.model_key.model_version}/session/${reply.body.id}` };
}

const shadowsOf = (t: TestPlatform, primaryIds: string[]) =>
  t.platform.db<InvocationRow>('invocations').whereIn('shadow_of', primaryIds).orderBy('created_at') as Promise<InvocationRow[]>;

const modelIdOf = async (t: TestPlatform, owner: Tenant, version: string) =>
  ((await t.platform.db('models').where({ workspace_id: owner.ws.id, model_code: 'iris-classifier', version }).first()) as { id: number }).id;

/** The first value of `read` that is `done`. */
async function readUntil<T>(read: () => Promise<T>, done: (value: T) => boolean, what: string): Promise<T> {
  let value!: T;
  await until(async () => done((value = await read())), what);
  return value;
}

describe('shadow versions of an alias: each prediction copied, never shown', () => {
  let t: TestPlatform;
  let executor: Awaited<ReturnType<typeof startExecutor>>;
  let demo: DemoModelServer & { url: string };
  let receiver: WebhookReceiver;
  before(async () => {
    t = await startTestPlatform();
    executor = await startExecutor(t.platform);
    demo = await startDemoModelServer('*');
    receiver = await startWebhookReceiver();
  });
  after(async () => {
    await receiver.close();
    await executor.close();
    await demo.close();
    await t.close();
  });

  it('queues each prediction again on the shadow version, at the lowest priority, out of the session the caller sees', async () => {
    const { owner, v1, v2 } = await shadowedAlias(t, demo.url);
    const hook = await t.private.post('/api/webhook', { token: owner.token, json: { url: `${receiver.url}/hooks`, events: ['invocation.completed'] } });
    expect(hook.status, hook.text).to.equal(201);
    const session = await openOnAlias(t, owner, 'production');
    const primaries: string[] = [];
    for (let i = 0; i < 3; i++) {
      const created = await t.public.post(`${session.path}/invocation`, { token: owner.token, json: PREDICT });
      expect(created.status, created.text).to.equal(201);
      expect(created.body.order).to.equal(i);
      primaries.push(created.body.id);
    }
    const shadows = await readUntil(() => shadowsOf(t, primaries), (rows) => rows.length === 3 && rows.every((row) => row.status === 'COMPLETED'), 'the shadows to complete');
    // Copied after each answer, in the order the predictions were answered.
    expect([...shadows].sort((a, b) => a.order - b.order).map((row) => row.shadow_of)).to.deep.equal(primaries);
    const v2Id = await modelIdOf(t, owner, v2);
    for (const row of shadows) {
      expect(row).to.include({ model_id: v2Id, priority: SHADOW_PRIORITY, type: 'PREDICT', body: IRIS, user_id: owner.user.id });
      expect(row.session_id).to.not.equal(session.id);
    }

    // The caller's session holds its three predictions in order, and nothing else.
    const listed = await readUntil(
      async () => (await t.public.get(`${session.path}/invocation`, { token: owner.token })).body as Array<{ id: string; order: number; status: string }>,
      (items) => items.every((item) => item.status === 'COMPLETED'),
      'the primaries to complete',
    );
    expect(listed.map((item) => item.id)).to.have.members(primaries);
    expect(listed.map((item) => item.order).sort()).to.deep.equal([0, 1, 2]);
    // The comparison finds the shadow agreeing with its primary on all three, though each answer names its own version.
    expect(JSON.parse(shadows[0]!.response)).to.include({ model_version: v2 });
    const compared = await t.private.get(`${ALIAS}/production/comparison`, { token: owner.token });
    expect(compared.status, compared.text).to.equal(200);
    expect(compared.body.versions.map((v: { version: string; agreement: unknown }) => [v.version, v.agreement && (v.agreement as { compared: number; agreed: number }).agreed])).to.deep.equal([
      [v1, null],
      [v2, 3],
    ]);
    expect(compared.body.versions[1].agreement).to.include({ compared: 3, truncated: false });
    // The workspace's webhooks hear of the primaries only.
    type Payload = { data: { invocation_id: string } };
    const payloads = (await t.platform.db('webhook_deliveries').where({ workspace_id: owner.ws.id }).pluck('payload')) as Array<string | Payload>;
    expect(payloads.map((payload) => (typeof payload === 'string' ? (JSON.parse(payload) as Payload) : payload).data.invocation_id)).to.have.members(primaries);
    expect((await t.public.get(`${session.path}/invocation/${shadows[0]!.id}`, { token: owner.token })).status).to.equal(404);
    // The shadow session is the platform's: not listed on v2, not readable, not writable by the caller.
    const v2Path = `/api/model/iris-classifier/version/${v2}/session`;
    expect((await t.public.get(v2Path, { token: owner.token })).body).to.deep.equal([]);
    expect((await t.public.get(`${v2Path}/${shadows[0]!.session_id}/invocation`, { token: owner.token })).status).to.equal(404);
    expect((await t.public.post(`${v2Path}/${shadows[0]!.session_id}/invocation`, { token: owner.token, json: PREDICT })).status).to.equal(404);
    expect((await sessionsStore.sessionCounts(t.platform.db)).filter((count) => count.workspace === owner.ws.name).map((count) => count.model_version)).to.deep.equal([v1]);

    // Feedback is not copied: only predictions are.
    const feedback = await t.public.post(`${session.path}/invocation/${primaries[0]}/feedback`, { token: owner.token, json: { request: { body: '{"correct":true}' } } });
    expect(feedback.status, feedback.text).to.equal(201);
    expect(await shadowsOf(t, [feedback.body.id])).to.deep.equal([]);
    const [copied] = (await t.platform.db('invocations').whereIn('session_id', shadows.map((row) => row.session_id)).count({ n: '*' })) as Array<{ n: string | number }>;
    expect(Number(copied!.n)).to.equal(3);
  });

  it('copies nothing for an alias whose policy has no shadows', async () => {
    const { owner } = await shadowedAlias(t, demo.url);
    const session = await openOnAlias(t, owner, 'staging');
    const created = await t.public.post(`${session.path}/invocation`, { token: owner.token, json: PREDICT });
    expect(created.status, created.text).to.equal(201);
    await t.platform.shadows.settled();
    expect(await shadowsOf(t, [created.body.id])).to.deep.equal([]);
    expect(await t.platform.db('sessions').where({ shadow_of: session.id })).to.deep.equal([]);
  });

  it('exports the shadows with the primary session: their version, and the prediction each copies', async () => {
    const { owner, storage, v1, v2 } = await shadowedAlias(t, demo.url);
    const session = await openOnAlias(t, owner, 'production');
    const created = await t.public.post(`${session.path}/invocation`, { token: owner.token, json: PREDICT });
    expect(created.status, created.text).to.equal(201);
    const [shadow] = await readUntil(() => shadowsOf(t, [created.body.id]), (rows) => rows.length === 1 && rows[0]!.status === 'COMPLETED', 'the shadow to complete');
    await readUntil(async () => (await t.public.get(`${session.path}/invocation/${created.body.id}`, { token: owner.token })).body.status, (status) => status === 'COMPLETED', 'the primary');
    expect((await t.public.patch(`${session.path}?state=CLOSED`, { token: owner.token })).status).to.equal(200);

    const exported = await t.public.post(`${session.path}/dataset`, { token: owner.token, json: { storage_key: storage } });
    expect(exported.status, exported.text).to.equal(201);
    expect(exported.body.row_count).to.equal(2);
    const records = (await t.public.get(`/api/dataset/${exported.body.id}/records`, { token: owner.token })).text.split('\n').filter(Boolean).map((line) => JSON.parse(line));
    expect(records.map((r) => [r.invocation_id, r.model_version, r.shadow_of])).to.deep.equal([
      [created.body.id, v1, null],
      [shadow!.id, v2, created.body.id],
    ]);
    expect(records[1]).to.include({ session_id: shadow!.session_id, status: 'COMPLETED', output: shadow!.response });
    const table = (await t.public.get(`/api/dataset/${exported.body.id}/table`, { token: owner.token })).text.split('\n').filter(Boolean).map((line) => JSON.parse(line));
    expect(table.map((row) => [row.model_version, row.shadow_of])).to.deep.equal([
      [v1, null],
      [v2, created.body.id],
    ]);
  });
});

// No executor here, so what a POST queues stays QUEUED and the quota counts it.
describe('shadow versions of an alias while nothing runs', () => {
  let t: TestPlatform;
  let demo: DemoModelServer & { url: string };
  before(async () => {
    t = await startTestPlatform();
    demo = await startDemoModelServer('*');
  });
  after(async () => {
    await demo.close();
    await t.close();
  });

  it('drops and counts the shadow that would pass max_queued; the primary is queued', async () => {
    const { owner } = await shadowedAlias(t, demo.url);
    const quota = await t.auth.patch(`/api/auth/workspace/${owner.ws.id}/quota`, { token: (await makeStaff(t)).token, json: { max_queued: 1 } });
    expect(quota.status, quota.text).to.equal(200);
    const session = await openOnAlias(t, owner, 'production');
    const dropped = t.platform.shadows.dropped.queue_full;
    const created = await t.public.post(`${session.path}/invocation`, { token: owner.token, json: PREDICT });
    expect(created.status, created.text).to.equal(201);
    expect(created.body).to.include({ status: 'QUEUED', order: 0 });
    // The copy ends after the answer: wait for it, then nothing was queued for it.
    await t.platform.shadows.settled();
    expect(await shadowsOf(t, [created.body.id])).to.deep.equal([]);
    expect(t.platform.shadows.dropped.queue_full).to.equal(dropped + 1);
    expect((await t.public.get('/metrics')).text).to.match(new RegExp(`^didyma_shadow_invocations_dropped_total\\{reason="queue_full"\\} ${dropped + 1}$`, 'm'));
  });

  it('cancels the queued copies of a prediction with it, and answers only the caller’s invocation', async () => {
    const { owner } = await shadowedAlias(t, demo.url);
    const session = await openOnAlias(t, owner, 'production');
    const [kept, cancelled] = [await t.public.post(`${session.path}/invocation`, { token: owner.token, json: PREDICT }), await t.public.post(`${session.path}/invocation`, { token: owner.token, json: PREDICT })];
    await t.platform.shadows.settled();
    expect((await shadowsOf(t, [kept.body.id, cancelled.body.id])).map((row) => row.status)).to.deep.equal(['QUEUED', 'QUEUED']);
    const reply = await t.public.post(`${session.path}/invocation/${cancelled.body.id}/cancel`, { token: owner.token });
    expect(reply.status, reply.text).to.equal(200);
    expect(reply.body).to.include({ id: cancelled.body.id, status: 'CANCELLED' });
    expect((await shadowsOf(t, [cancelled.body.id]))[0]).to.include({ status: 'CANCELLED' });
    expect((await shadowsOf(t, [kept.body.id]))[0], 'another prediction’s copy').to.include({ status: 'QUEUED' });
    const listed = await t.public.get(`${session.path}/invocation`, { token: owner.token });
    expect(listed.body.map((row: { id: string }) => row.id).sort()).to.deep.equal([kept.body.id, cancelled.body.id].sort());
  });
});
