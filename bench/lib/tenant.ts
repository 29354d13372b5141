import type { Knex } from 'knex';
import { Client } from '../../test/support/http.js';
import { MODEL, type BenchModelServer } from './model-server.js';

// The tenant of a benchmark run, through the platform's own API: a token of the
// bootstrapped staff user, storage, a model card, a deployment on the model
// server, the platform model, and sessions to invoke it in.

export interface Tenant {
  token: string;
  /** Headers of an authenticated JSON request, for autocannon. */
  headers: Record<string, string>;
  /** The model's path under the public API: /api/model/{code}/version/{version}. */
  base: string;
  /** `n` fresh sessions of the model; their ids. */
  sessions(n: number): Promise<string[]>;
}

/** Where the tenant lives: its workspace, and the model version and deployment key, unique across workspaces. */
export interface TenantPlace {
  workspace: string;
  version: string;
  deploymentKey: string;
}

/** `modelFields` are added to the platform model's registration (need_context, say). */
export async function setUpTenant(
  urls: { auth: string; private: string; public: string },
  admin: { email: string; password: string },
  model: BenchModelServer,
  modelFields: Record<string, unknown> = {},
  place: TenantPlace = { workspace: 'default', version: MODEL.version, deploymentKey: 'bench' },
): Promise<Tenant> {
  const auth = new Client(urls.auth);
  const priv = new Client(urls.private);
  const pub = new Client(urls.public);
  const token = (await expectOk(auth.post('/api/auth/token/obtain', { json: { ...admin, workspace: place.workspace } }))).body.access as string;
  await expectOk(priv.post('/api/storage', { token, json: { storage_key: 'bench', storage_class: 'didyma.storage.FilesystemStorage', connector_init: { path: 'bench' } } }));
  await expectOk(
    priv.post('/api/deployment', {
      token,
      json: {
        deployment_key: place.deploymentKey,
        registry_connector_class: 'didyma.registry.OpenInferenceRegistryConnector',
        registry_connector_init: { model_registry_url: model.url },
        server_proxy_class: 'didyma.proxy.OpenInferenceServerProxy',
        server_proxy_init: { server_proxy_url: model.url },
      },
    }),
  );
  await registerVersion(priv, token, model, place.version, modelFields);
  const base = `/api/model/${MODEL.name}/version/${place.version}`;
  return {
    token,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    base,
    async sessions(n) {
      const ids: string[] = [];
      for (let i = 0; i < n; i++) ids.push((await expectOk(pub.post(`${base}/session`, { token }))).body.id as string);
      return ids;
    },
  };
}

/**
 * The same in a new workspace `name`, created through the auth API with the
 * token of `home`; the staff user joins it with SQL (bench setup) to sign in
 * to it. Its model version and deployment key are the workspace's name.
 */
export async function workspaceTenant(
  urls: { auth: string; private: string; public: string },
  admin: { email: string; password: string },
  db: Knex,
  model: BenchModelServer,
  home: Tenant,
  name: string,
): Promise<Tenant> {
  const created = await expectOk(new Client(urls.auth).post('/api/auth/workspace', { token: home.token, json: { name } }));
  const adminId = ((await db('users').where({ email: admin.email }).first('id')) as { id: number }).id;
  await db('memberships').insert({ user_id: adminId, workspace_id: created.body.id as number, role: 'supervisor' });
  return setUpTenant(urls, admin, model, {}, { workspace: name, version: name, deploymentKey: name });
}

/**
 * Registers `version` of the bench's model code on `model` in the workspace
 * of `token` (its storage `bench` and a deployment on `model` already there),
 * with a model card of its own.
 */
export async function registerVersion(priv: Client, token: string, model: BenchModelServer, version: string, modelFields: Record<string, unknown> = {}): Promise<void> {
  const ticket = await expectOk(priv.post('/api/storage/bench/files/request_upload', { token, json: { file_name: 'card.md', content_type: 'text/markdown' } }));
  const form = new FormData();
  form.append('file', new Blob(['# Iris'], { type: 'text/markdown' }), 'card.md');
  const card = await expectOk(priv.post(`/api/storage/bench/files/proxy_upload/${ticket.body.upload_id}`, { token, multipart: form }));
  await expectOk(
    priv.post('/api/platform_model', {
      token,
      json: {
        model_code: MODEL.name,
        version,
        name: 'Iris',
        description: `Iris species (${model.label})`,
        input_schema: model.inputSchema,
        output_schema: { type: 'json' },
        model_card_file_id: card.body.file_id,
        ...modelFields,
      },
    }),
  );
}

export async function expectOk<T extends { status: number; text: string }>(reply: Promise<T>): Promise<T> {
  const r = await reply;
  if (r.status >= 300) throw new Error(`setup request failed: ${r.status} ${r.text}`);
  return r;
}

/**
 * A tenant in a workspace of its own, `name`, created by the staff user of
 * `staffHeaders`, who joins it as supervisor to sign in to it; its model
 * version and deployment key are `name` too (the model server must answer any
 * version: the demo server with ANY_VERSION).
 */
export async function setUpWorkspaceTenant(
  urls: { auth: string; private: string; public: string },
  admin: { email: string; password: string },
  staff: { headers: Record<string, string>; join: (workspaceId: number) => Promise<void> },
  model: BenchModelServer,
  name: string,
): Promise<Tenant & { workspaceId: number }> {
  const created = await fetch(`${urls.auth}/api/auth/workspace`, { method: 'POST', headers: staff.headers, body: JSON.stringify({ name }) });
  if (created.status !== 201) throw new Error(`creating workspace ${name}: ${created.status} ${await created.text()}`);
  const { id } = (await created.json()) as { id: number };
  await staff.join(id);
  return { ...(await setUpTenant(urls, admin, model, {}, { workspace: name, version: name, deploymentKey: name })), workspaceId: id };
}
