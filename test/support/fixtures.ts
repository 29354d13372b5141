import crypto from 'node:crypto';
import type { Knex } from 'knex';
import { createDemoModelServer, type DemoModelServer } from '../../demo/model-server/server.js';
import { expect } from 'chai';
import type { Client } from './http.js';
import { until } from './until.js';
import { sessionsStore, type QueuedInvocation } from '../../features/invocations/store.js';
import { DEFAULT_PRIORITY } from '../../features/invocations/state.js';
import { login, makeUser, makeWorkspace, startTestPlatform, unique, type TestPlatform, type TestUser } from './platform.js';

export const OPEN_INFERENCE_REGISTRY = 'didyma.registry.OpenInferenceRegistryConnector';
export const OPEN_INFERENCE_PROXY = 'didyma.proxy.OpenInferenceServerProxy';
export const FILESYSTEM_STORAGE = 'didyma.storage.FilesystemStorage';

export interface Tenant {
  user: TestUser;
  ws: { id: number; name: string };
  token: string;
}

/** A fresh workspace with one member of the given role, logged in to it (`workspace` names it when the test must know the name first). */
export async function tenant(t: TestPlatform, role: 'user' | 'supervisor' = 'supervisor', workspace?: string): Promise<Tenant> {
  const user = await makeUser(t.platform);
  const ws = await makeWorkspace(t.platform, [[user, role]], workspace);
  return { user, ws, token: (await login(t.auth, user, ws.name)).access };
}

/** Another member of the same workspace. */
export async function colleague(t: TestPlatform, of: Tenant, role: 'user' | 'supervisor' = 'user'): Promise<Tenant> {
  const user = await makeUser(t.platform);
  await t.platform.db('memberships').insert({ user_id: user.id, workspace_id: of.ws.id, role });
  return { user, ws: of.ws, token: (await login(t.auth, user, of.ws.name)).access };
}

/** A demo model server on a free port, each call taking `inferenceDelayMs`; `version` serves its models under a fresh version (pairs are unique forever). */
export async function startDemoModelServer(version?: string, inferenceDelayMs?: number): Promise<DemoModelServer & { url: string }> {
  const server = createDemoModelServer({ version, inferenceDelayMs });
  const { url } = await server.listen(0, '127.0.0.1');
  return Object.assign(server, { url });
}

export async function filesystemStorage(client: Client, token: string, key = unique('files')) {
  const reply = await client.post('/api/storage', { token, json: { storage_key: key, storage_class: FILESYSTEM_STORAGE, connector_init: { path: key } } });
  if (reply.status !== 201) throw new Error(`storage: ${reply.status} ${reply.text}`);
  return key;
}

export async function upload(client: Client, token: string, storageKey: string, content: string | Buffer, fileName = 'card.md', type = 'text/markdown') {
  const ticket = await client.post(`/api/storage/${storageKey}/files/request_upload`, { token, json: { file_name: fileName, content_type: type } });
  if (ticket.status !== 201) throw new Error(`request_upload: ${ticket.status} ${ticket.text}`);
  const form = new FormData();
  form.append('file', new Blob([typeof content === 'string' ? content : new Uint8Array(content)], { type }), fileName);
  const stored = await client.post(`/api/storage/${storageKey}/files/proxy_upload/${ticket.body.upload_id}`, { token, multipart: form });
  if (stored.status !== 201) throw new Error(`proxy_upload: ${stored.status} ${stored.text}`);
  return stored.body as { file_id: string; sha256: string; size: number };
}

export async function demoDeployment(client: Client, token: string, demoUrl: string, key = unique('demo'), extra: Record<string, unknown> = {}, modelServerUrl = demoUrl) {
  const reply = await client.post('/api/deployment', {
    token,
    json: {
      ...extra,
      deployment_key: key,
      registry_connector_class: OPEN_INFERENCE_REGISTRY,
      registry_connector_init: { model_registry_url: demoUrl, tracking_server_url: demoUrl },
      server_proxy_class: OPEN_INFERENCE_PROXY,
      server_proxy_init: { server_proxy_url: modelServerUrl },
    },
  });
  if (reply.status !== 201) throw new Error(`deployment: ${reply.status} ${reply.text}`);
  return key;
}

const FEATURES = {
  type: 'json',
  description: 'Iris measurements in cm',
  schema: {
    type: 'object',
    additionalProperties: false,
    required: ['sepal_length', 'sepal_width', 'petal_length', 'petal_width'],
    properties: {
      sepal_length: { type: 'number', minimum: 0 },
      sepal_width: { type: 'number', minimum: 0 },
      petal_length: { type: 'number', minimum: 0 },
      petal_width: { type: 'number', minimum: 0 },
    },
  },
};

/** A payload for a demo model; the (code, version) pair must be one the demo server serves. */
export function modelPayload(code: string, version: string, cardId: string, extra: Record<string, unknown> = {}) {
  return {
    model_code: code,
    version,
    name: `${code} ${version}`,
    description: 'Iris species from flower measurements',
    input_schema: FEATURES,
    output_schema: { type: 'json', description: 'Open Inference outputs' },
    model_card_file_id: cardId,
    ...extra,
  };
}

export const IRIS = JSON.stringify({ sepal_length: 5.1, sepal_width: 3.5, petal_length: 1.4, petal_width: 0.2 });

/** Queues an iris prediction in `session` of the model at `modelPath` and waits until it is COMPLETED; its id. */
export async function completedPrediction(pub: Client, token: string, modelPath: string, session: string): Promise<string> {
  const invocation = await pub.post(`${modelPath}/session/${session}/invocation`, { token, json: { type: 'PREDICT', request: { type: 'FEATURES', body: IRIS } } });
  expect(invocation.status, invocation.text).to.equal(201);
  let status = '';
  await until(async () => {
    status = (await pub.get(`${modelPath}/session/${session}/invocation/${invocation.body.id}/check_progress`, { token })).body.status;
    return status === 'COMPLETED' || status === 'ERROR';
  }, 'the prediction', 120_000);
  expect(status).to.equal('COMPLETED');
  return invocation.body.id as string;
}

/** The iris classifier `version` registered for `owner` on a demo deployment of `demoUrl`, with a model card; its model id. */
export async function registeredIris(t: TestPlatform, owner: Tenant, demoUrl: string, version: string): Promise<number> {
  await demoDeployment(t.private, owner.token, demoUrl);
  const card = await upload(t.private, owner.token, await filesystemStorage(t.private, owner.token), '# Iris');
  const registered = await t.private.post('/api/platform_model', { token: owner.token, json: modelPayload('iris-classifier', version, card.file_id) });
  if (registered.status !== 201) throw new Error(`registering iris-classifier ${version}: ${registered.status} ${registered.text}`);
  return ((await t.platform.db('models').where({ model_code: 'iris-classifier', version }).first('id')) as { id: number }).id;
}

export interface IrisPlatform {
  t: TestPlatform;
  owner: Tenant;
  modelId: number;
  close(): Promise<void>;
}

/** A test platform with a tenant that registered iris-classifier `version` on a demo model server (store-level tests). */
export async function startIrisPlatform(version: string): Promise<IrisPlatform> {
  const t = await startTestPlatform();
  const demo = await startDemoModelServer(version);
  const owner = await tenant(t);
  const modelId = await registeredIris(t, owner, demo.url, version);
  return {
    t,
    owner,
    modelId,
    async close() {
      await demo.close();
      await t.close();
    },
  };
}

export type IrisSession = IrisPlatform & { sessionId: string };

/** An iris platform with one OPEN session of its owner, for store- and executor-level tests. */
export async function startIrisSession(version: string): Promise<IrisSession> {
  const iris = await startIrisPlatform(version);
  const created = await iris.t.public.post(`/api/model/iris-classifier/version/${version}/session`, { token: iris.owner.token });
  return { ...iris, sessionId: created.body.id as string };
}

/**
 * An iris session whose sweeper is stopped, so only the writes
 * under test move its rows; closing deletes them, as rows left QUEUED or
 * IN_PROGRESS would be run by the executors of later tests.
 */
export async function startStillIrisSession(version: string): Promise<IrisSession> {
  const iris = await startIrisSession(version);
  await iris.t.platform.sweeper.stop();
  return {
    ...iris,
    async close() {
      await iris.t.platform.db('invocations').where({ session_id: iris.sessionId }).delete();
      await iris.close();
    },
  };
}

/**
 * An OPEN session of `to.userId` for `to.modelId` in another workspace, written
 * straight to the store: tests of the fair claim fill many workspaces at once,
 * and an invocation must belong to its session's workspace.
 */
export async function sessionIn(db: Knex, to: { workspaceId: number; userId: number; modelId: number }): Promise<string> {
  return (await sessionsStore.insert(db, { id: crypto.randomUUID(), workspace_id: to.workspaceId, user_id: to.userId, model_id: to.modelId })).id;
}

/** A QUEUED PREDICT of `body` as a POST …/invocation appends it, for store-level tests. */
export function queuedPredict(to: { workspaceId: number; sessionId: string; userId: number; modelId: number }, body = IRIS): QueuedInvocation {
  return {
    id: crypto.randomUUID(),
    workspace_id: to.workspaceId,
    session_id: to.sessionId,
    user_id: to.userId,
    model_id: to.modelId,
    type: 'PREDICT',
    request_type: 'FEATURES',
    body,
    model_key: '',
    related_to: null,
    with_explanation: false,
    output_storage_key: null,
    priority: DEFAULT_PRIORITY,
  };
}

/** A supervisor's workspace with a deployment of the demo server at `demoUrl` and iris-classifier registered at `version` (with `extra` in its payload). */
export async function workspaceWithIris(t: TestPlatform, demoUrl: string, version: string, extra: Record<string, unknown> = {}): Promise<Tenant> {
  const owner = await tenant(t);
  await demoDeployment(t.private, owner.token, demoUrl);
  const card = await upload(t.private, owner.token, await filesystemStorage(t.private, owner.token), '# Iris');
  const reply = await t.private.post('/api/platform_model', { token: owner.token, json: modelPayload('iris-classifier', version, card.file_id, extra) });
  if (reply.status !== 201) throw new Error(`register: ${reply.status} ${reply.text}`);
  return owner;
}
