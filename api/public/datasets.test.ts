import crypto from 'node:crypto';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import { parquetMetadata, parquetReadObjects } from 'hyparquet';
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

  /** What the table holds of a prediction, from the API's invocations: features, output tensors, the explanation's, the feedback. */
  function expectedRow(predict: any, explanation: any, feedback: any) {
    const tensors = (response: string) => Object.fromEntries((JSON.parse(response).outputs as any[]).map((t) => [t.name, t.shape[0] === 1 && t.shape.length === 1 ? t.data[0] : t.data]));
    const output = tensors(predict.response);
    const explained = explanation ? tensors(explanation.response) : undefined;
    return {
      invocation_id: predict.id,
      session_id: predict.request.session_id,
      order: predict.order,
      model_code: 'iris-classifier',
      model_version: version,
      type: 'PREDICT',
      request_type: 'FEATURES',
      status: 'COMPLETED',
      error: null,
      created_at: predict.created_at,
      started_at: predict.started_at,
      completed_at: predict.completed_at,
      shadow_of: null,
      ...Object.fromEntries(Object.entries(JSON.parse(IRIS)).map(([name, value]) => [`input_${name}`, value])),
      output_predicted_class: output.predicted_class,
      output_probabilities: output.probabilities,
      explanation_1_invocation_id: explanation?.id ?? null,
      explanation_1_status: explanation?.status ?? null,
      explanation_1_output_explained_class: explained?.explained_class ?? null,
      explanation_1_output_contributions: explained?.contributions ?? null,
      explanation_1_output_intercept: explained?.intercept ?? null,
      explanation_1_output_score: explained?.score ?? null,
      feedback_count: feedback ? 1 : 0,
      last_feedback_at: feedback?.created_at ?? null,
      feedback_correct: feedback ? JSON.parse(feedback.request.body).correct : null,
    };
  }

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

  it('writes the typed table as JSON Lines by default: one column per feature, output, explanation output and feedback field', async () => {
    const { path, invocations } = await workedSession(owner);
    const exported = await t.public.post(`${path}/dataset`, { token: owner.token, json: { storage_key: storage } });
    expect(exported.body.table).to.include({ format: 'jsonl', media_type: 'application/x-ndjson' });
    const table = await t.public.get(`/api/dataset/${exported.body.id}/table`, { token: owner.token });
    expect(table.status).to.equal(200);
    expect(table.headers.get('content-type')).to.match(/^application\/x-ndjson/);
    expect(crypto.createHash('sha256').update(table.text).digest('hex')).to.equal(exported.body.table.sha256);
    const [predict, explanation, feedback, second] = invocations;
    const manifest = (await t.public.get(`/api/dataset/${exported.body.id}/manifest`, { token: owner.token })).body;
    const columns = manifest.table.columns as Array<{ name: string; type: string }>;
    expect(manifest.table).to.include({ format: 'jsonl', file: 'table.jsonl', sha256: exported.body.table.sha256 });
    expect(Object.fromEntries(columns.map((c) => [c.name, c.type]))).to.deep.include({
      order: 'int64',
      created_at: 'timestamp',
      input_sepal_length: 'double',
      output_predicted_class: 'string',
      output_probabilities: 'list<double>',
      explanation_1_output_contributions: 'list<double>',
      feedback_correct: 'boolean',
      feedback_count: 'int64',
    });
    const rows = lines(table.text);
    expect(rows).to.deep.equal([expectedRow(predict, explanation, feedback), expectedRow(second, undefined, undefined)]);
    expect(Object.keys(rows[0])).to.deep.equal(columns.map((c) => c.name));
  });

  it("puts the input columns in the order of the schema's properties, as registered, not as jsonb would sort them", async () => {
    const { path } = await workedSession(owner);
    const exported = await t.public.post(`${path}/dataset`, { token: owner.token, json: { storage_key: storage } });
    const manifest = (await t.public.get(`/api/dataset/${exported.body.id}/manifest`, { token: owner.token })).body;
    const inputs = (manifest.table.columns as Array<{ name: string; source: string }>).filter((c) => c.source === 'input').map((c) => c.name);
    // jsonb orders keys shortest first: petal_width, sepal_width, petal_length, sepal_length.
    expect(inputs).to.deep.equal(['input_sepal_length', 'input_sepal_width', 'input_petal_length', 'input_petal_width']);
    const model = (await t.public.get(base(), { token: owner.token })).body;
    expect(Object.keys(model.input_schema.schema.properties)).to.deep.equal(['sepal_length', 'sepal_width', 'petal_length', 'petal_width']);
  });

  it('writes the table as Parquet that holds every value of the API’s invocations, typed, with its columns in the metadata', async () => {
    const { path, invocations } = await workedSession(owner);
    const exported = await t.public.post(`${path}/dataset`, { token: owner.token, json: { storage_key: storage, format: 'parquet' } });
    expect(exported.status, exported.text).to.equal(201);
    expect(exported.body.table).to.include({ format: 'parquet', media_type: 'application/vnd.apache.parquet' });
    // Bytes, not text: fetch it directly.
    const download = await fetch(`${t.public.baseUrl}/api/dataset/${exported.body.id}/table`, { headers: { authorization: `Bearer ${owner.token}` } });
    expect(download.status).to.equal(200);
    expect(download.headers.get('content-type')).to.equal('application/vnd.apache.parquet');
    expect(download.headers.get('content-disposition')).to.match(/\.table\.parquet"?$/);
    const bytes = Buffer.from(await download.arrayBuffer());
    expect(crypto.createHash('sha256').update(bytes).digest('hex')).to.equal(exported.body.table.sha256);
    const file = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;

    const [predict, explanation, feedback, second] = invocations;
    const asJson = (row: Record<string, unknown>) =>
      Object.fromEntries(Object.entries(row).map(([name, value]) => [name, value instanceof Date ? value.toISOString() : typeof value === 'bigint' ? Number(value) : value ?? null]));
    const rows = (await parquetReadObjects({ file })).map(asJson);
    expect(rows).to.deep.equal([expectedRow(predict, explanation, feedback), expectedRow(second, undefined, undefined)]);
    const described = JSON.parse(parquetMetadata(file).key_value_metadata!.find((entry) => entry.key === 'didyma.dataset')!.value!);
    expect(described.dataset).to.include({ id: exported.body.id, version: 1 });
    expect(described.columns.map((c: { name: string }) => c.name)).to.deep.equal(Object.keys(rows[0]!));

    // The records stay JSON Lines, as they always were.
    const records = await t.public.get(`/api/dataset/${exported.body.id}/records`, { token: owner.token });
    expect(lines(records.text).map((r) => r.invocation_id)).to.deep.equal([predict.id, second.id]);
    expect(exported.body.format).to.equal('application/x-ndjson');
  });

  it('keeps the platform’s feedback_count when feedback carries a field named count, and exports it as Parquet', async () => {
    const session = (await t.public.post(`${base()}/session`, { token: owner.token })).body.id as string;
    const path = `${base()}/session/${session}`;
    const predict = await t.public.post(`${path}/invocation`, { token: owner.token, json: { type: 'PREDICT', request: { type: 'FEATURES', body: IRIS } } });
    await until(async () => (await t.public.get(`${path}/invocation/${predict.body.id}`, { token: owner.token })).body.status === 'COMPLETED', 'the prediction');
    // The model has no feedback schema, so any JSON object is feedback: this one names the platform's column.
    const feedback = await t.public.post(`${path}/invocation/${predict.body.id}/feedback`, { token: owner.token, json: { request: { body: '{"count":"seven","correct":true}' } } });
    expect(feedback.status, feedback.text).to.equal(201);
    expect((await t.public.patch(`${path}?state=CLOSED`, { token: owner.token })).status).to.equal(200);
    const exported = await t.public.post(`${path}/dataset`, { token: owner.token, json: { storage_key: storage, format: 'parquet' } });
    expect(exported.status, exported.text).to.equal(201);
    const download = await fetch(`${t.public.baseUrl}/api/dataset/${exported.body.id}/table`, { headers: { authorization: `Bearer ${owner.token}` } });
    expect(download.status).to.equal(200);
    const bytes = Buffer.from(await download.arrayBuffer());
    const [row] = await parquetReadObjects({ file: bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer });
    expect(Number(row!.feedback_count)).to.equal(1);
    expect(row!.feedback_correct).to.equal(true);
    // The field is not lost: the records keep every feedback body as sent.
    const records = lines((await t.public.get(`/api/dataset/${exported.body.id}/records`, { token: owner.token })).text);
    expect(records[0].feedback[0].body).to.equal('{"count":"seven","correct":true}');
  });

  it('refuses a feedback schema that declares a property named count, naming it', async () => {
    const card = await upload(t.private, owner.token, storage, '# card');
    const payload = modelPayload('iris-classifier', unique('v'), card.file_id, { feedback_schema: { type: 'object', properties: { count: { type: 'integer' } } } });
    const refused = await t.private.post('/api/platform_model', { token: owner.token, json: payload });
    expect(refused.status, refused.text).to.equal(400);
    expect(refused.body.message).to.include('feedback_schema.properties.count');
    expect(refused.body.details.map((detail: { field: string }) => detail.field)).to.deep.equal(['feedback_schema.properties.count']);
  });

  it('refuses a format it does not write with a 400 naming the ones it does', async () => {
    const { path } = await workedSession(owner);
    const refused = await t.public.post(`${path}/dataset`, { token: owner.token, json: { storage_key: storage, format: 'csv' } });
    expect(refused.status).to.equal(400);
    expect(refused.body.message).to.match(/format/).and.to.match(/jsonl, parquet/);
    const filtered = await t.public.post('/api/dataset', { token: owner.token, json: { name: 'x', storage_key: storage, format: 'xlsx' } });
    expect(filtered.status).to.equal(400);
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
      for (const suffix of ['', '/records', '/table', '/manifest']) {
        const reply = await t.public.get(`/api/dataset/${exported.id}${suffix}`, { token: who.token });
        expect(reply.status, `${suffix} ${reply.text}`).to.equal(404);
      }
      const listed = await t.public.get('/api/dataset', { token: who.token });
      expect(listed.body.map((d: { id: string }) => d.id)).to.not.include(exported.id);
    }
  });
});

describe('public server: a dataset export past DIDYMA_DATASET_MAX_BYTES', () => {
  const LIMIT = 4096;
  const version = unique('v');
  let t: TestPlatform;
  let executor: Awaited<ReturnType<typeof startExecutor>>;
  let demo: DemoModelServer & { url: string };
  before(async () => {
    t = await startTestPlatform({ datasetMaxBytes: LIMIT });
    executor = await startExecutor(t.platform);
    demo = await startDemoModelServer(version);
  });
  after(async () => {
    await executor.close();
    await demo.close();
    await t.close();
  });

  it('answers 413 when the table is over the limit, and leaves no file of the version behind', async () => {
    const owner = await tenant(t);
    await demoDeployment(t.private, owner.token, demo.url);
    const storage = await filesystemStorage(t.private, owner.token);
    const card = await upload(t.private, owner.token, storage, '# Iris');
    expect((await t.private.post('/api/platform_model', { token: owner.token, json: modelPayload('iris-classifier', version, card.file_id) })).status).to.equal(201);
    const path = `/api/model/iris-classifier/version/${version}/session/${(await t.public.post(`/api/model/iris-classifier/version/${version}/session`, { token: owner.token })).body.id}`;
    const created = await t.public.post(`${path}/invocation`, { token: owner.token, json: { type: 'PREDICT', request: { type: 'FEATURES', body: IRIS } } });
    await until(async () => (await t.public.get(`${path}/invocation/${created.body.id}`, { token: owner.token })).body.status === 'COMPLETED', 'the prediction');
    await t.public.patch(`${path}?state=CLOSED`, { token: owner.token });

    const small = await t.public.post(`${path}/dataset`, { token: owner.token, json: { storage_key: storage } });
    expect(small.status, small.text).to.equal(201);
    expect(small.body.size).to.be.below(LIMIT);
    const large = await t.public.post(`${path}/dataset`, { token: owner.token, json: { storage_key: storage, format: 'parquet' } });
    expect(large.status, large.text).to.equal(413);
    expect(large.body.message_code).to.equal('payload_too_large');
    const folder = join(t.dataDir, 'files', storage, 'workspace', String(owner.ws.id), 'datasets');
    const files = readdirSync(folder, { recursive: true, withFileTypes: true }).filter((entry) => entry.isFile());
    expect(files.map((entry) => join(entry.parentPath, entry.name)).sort()).to.deep.equal(['manifest.json', 'records.jsonl', 'table.jsonl'].map((name) => join(folder, small.body.id, name)));
    expect((await t.public.get('/api/dataset', { token: owner.token })).body.map((d: { id: string }) => d.id)).to.deep.equal([small.body.id]);
  });
});
