import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { demoDeployment, filesystemStorage, modelPayload, queuedPredict, startDemoModelServer, startIrisSession, tenant, upload, type IrisSession } from '../test/support/fixtures.js';
import { startTestPlatform, unique, type TestPlatform } from '../test/support/platform.js';
import { until } from '../test/support/until.js';
import { startExecutor } from './start.js';
import type { DemoModelServer } from '../demo/model-server/server.js';
import { invocationState } from '../features/invocations/state.js';
import { invocationsStore, type InvocationRow } from '../features/invocations/store.js';

describe('session context of need_context models: the latest N invocations within a byte budget', () => {
  let iris: IrisSession;
  let rows: InvocationRow[]; // predictions 0..5, with a feedback between 2 and 3
  let sizes: number[];

  before(async () => {
    const version = unique('v');
    iris = await startIrisSession(version);
    const { t, owner, modelId, sessionId } = iris;
    const to = { workspaceId: owner.ws.id, sessionId, userId: owner.user.id, modelId };
    rows = [];
    for (let i = 0; i < 6; i++) {
      const [row] = await invocationState.appendQueued(t.platform.db, [queuedPredict(to, `request ${i} ${'x'.repeat(100 * i)}`)]);
      await t.platform.db('invocations').where({ id: row!.id }).update({ status: 'COMPLETED', response: `response ${i}` });
      rows.push({ ...row!, response: `response ${i}` });
      if (i === 2) {
        const path = `/api/model/iris-classifier/version/${version}/session/${sessionId}/invocation/${row!.id}/feedback`;
        const feedback = await t.public.post(path, { token: owner.token, json: { request: { body: '{"correct":true}' } } });
        expect(feedback.status, feedback.text).to.equal(201);
      }
    }
    sizes = rows.map((row) => Buffer.byteLength(row.body) + Buffer.byteLength(row.response));
  });
  after(() => iris.close());

  const contextOf = (row: InvocationRow, window: { maxInvocations: number; maxBytes: number }) =>
    invocationsStore.contextBefore(iris.t.platform.db, row, window).then((entries) => entries.map((entry) => entry.response));

  it('gives the latest N earlier predictions and explanations, oldest first, feedback aside', async () => {
    expect(await contextOf(rows[5]!, { maxInvocations: 3, maxBytes: 1 << 20 })).to.deep.equal(['response 2', 'response 3', 'response 4']);
    expect(await contextOf(rows[2]!, { maxInvocations: 3, maxBytes: 1 << 20 })).to.deep.equal(['response 0', 'response 1']);
    expect(await contextOf(rows[0]!, { maxInvocations: 3, maxBytes: 1 << 20 })).to.deep.equal([]);
  });

  it('leaves out the older invocations that would go over the byte budget', async () => {
    const latestTwo = sizes[4]! + sizes[3]!;
    expect(await contextOf(rows[5]!, { maxInvocations: 10, maxBytes: latestTwo })).to.deep.equal(['response 3', 'response 4']);
    expect(await contextOf(rows[5]!, { maxInvocations: 10, maxBytes: latestTwo - 1 })).to.deep.equal(['response 4']);
    expect(await contextOf(rows[5]!, { maxInvocations: 10, maxBytes: sizes[4]! - 1 }), 'one larger than the budget by itself').to.deep.equal([]);
  });
});

describe('an executor gives a need_context model the window its configuration sets', () => {
  let t: TestPlatform;
  let executor: Awaited<ReturnType<typeof startExecutor>>;
  let demo: DemoModelServer & { url: string };
  let recorder: http.Server;
  const contexts: Array<string | undefined> = [];

  before(async () => {
    t = await startTestPlatform({ contextMaxInvocations: 2 });
    executor = await startExecutor(t.platform);
    const version = unique('v');
    demo = await startDemoModelServer(version);
    // In front of the model server: notes the context each inference carries.
    recorder = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', async () => {
        const body = Buffer.concat(chunks);
        if (req.url?.endsWith('/infer')) contexts.push((JSON.parse(body.toString()) as { parameters?: { context?: string } }).parameters?.context);
        const upstream = await fetch(demo.url + req.url, { method: req.method, headers: { 'content-type': 'application/json' }, body: req.method === 'GET' ? undefined : body });
        res.writeHead(upstream.status, { 'content-type': upstream.headers.get('content-type') ?? 'application/json' });
        res.end(Buffer.from(await upstream.arrayBuffer()));
      });
    });
    await new Promise<void>((resolve) => recorder.listen(0, '127.0.0.1', resolve));
    const owner = await tenant(t);
    await demoDeployment(t.private, owner.token, `http://127.0.0.1:${(recorder.address() as AddressInfo).port}`);
    const card = await upload(t.private, owner.token, await filesystemStorage(t.private, owner.token), '# Iris');
    expect((await t.private.post('/api/platform_model', { token: owner.token, json: modelPayload('iris-classifier', version, card.file_id, { need_context: true }) })).status).to.equal(201);
    const base = `/api/model/iris-classifier/version/${version}`;
    const session = (await t.public.post(`${base}/session`, { token: owner.token })).body.id as string;
    for (let i = 0; i < 4; i++) {
      const body = JSON.stringify({ sepal_length: 5 + i / 10, sepal_width: 3.5, petal_length: 1.4, petal_width: 0.2 });
      const created = await t.public.post(`${base}/session/${session}/invocation`, { token: owner.token, json: { type: 'PREDICT', request: { type: 'FEATURES', body } } });
      expect(created.status, created.text).to.equal(201);
      await until(async () => (await t.public.get(`${base}/session/${session}/invocation/${created.body.id}`, { token: owner.token })).body.status === 'COMPLETED', 'the prediction');
    }
  });
  after(async () => {
    await executor.close();
    await new Promise((resolve) => recorder.close(resolve));
    await demo.close();
    await t.close();
  });

  it('sends the latest DIDYMA_CONTEXT_MAX_INVOCATIONS earlier calls, oldest first', () => {
    const features = (text: string | undefined) => (text ? (JSON.parse(text) as Array<{ request: string }>).map((entry) => JSON.parse(entry.request).sepal_length) : []);
    expect(contexts.map(features)).to.deep.equal([[], [5], [5, 5.1], [5.1, 5.2]]);
  });
});
