import { expect } from 'chai';
import { startTestPlatform, unique, type TestPlatform } from '../../test/support/platform.js';
import { colleague, completedPrediction, demoDeployment, filesystemStorage, modelPayload, startDemoModelServer, tenant, upload, type Tenant } from '../../test/support/fixtures.js';
import type { DemoModelServer } from '../../demo/model-server/server.js';
import type { AuditRow } from '../../features/audit/store.js';
import { ModelAliasesService } from '../../features/models/aliases.service.js';
import { modelAliasesStore } from '../../features/models/aliases.store.js';
import { aliasPoliciesStore } from '../../features/models/alias-policies.store.js';
import { AliasPoliciesService } from '../../features/models/alias-policies.service.js';
import { modelsStore } from '../../features/models/store.js';
import type { Principal } from '../../features/auth/principal.js';
import { startExecutor } from '../../executor/start.js';

describe('model aliases', () => {
  let t: TestPlatform;
  let demo: DemoModelServer & { url: string };
  let executor: Awaited<ReturnType<typeof startExecutor>>;
  before(async () => {
    t = await startTestPlatform();
    executor = await startExecutor(t.platform);
    demo = await startDemoModelServer('*');
  });
  after(async () => {
    await executor.close();
    await demo.close();
    await t.close();
  });

  /** A supervisor's workspace with iris-classifier registered at two fresh versions (and iris-explainer at a third). */
  async function twoVersions() {
    const owner = await tenant(t);
    await demoDeployment(t.private, owner.token, demo.url);
    const card = (await upload(t.private, owner.token, await filesystemStorage(t.private, owner.token), '# Iris')).file_id;
    const [v1, v2, other] = [unique('v1'), unique('v2'), unique('o')];
    for (const [code, version] of [['iris-classifier', v1], ['iris-classifier', v2], ['iris-explainer', other]] as const) {
      const reply = await t.private.post('/api/platform_model', { token: owner.token, json: modelPayload(code, version, card) });
      expect(reply.status, reply.text).to.equal(201);
    }
    return { owner, v1, v2, other };
  }

  const aliasPath = (alias: string, code = 'iris-classifier') => `/api/platform_model/${code}/alias/${alias}`;
  const setAlias = (owner: Tenant, alias: string, version: string, code = 'iris-classifier') => t.private.put(aliasPath(alias, code), { token: owner.token, json: { version } });
  const openOn = (owner: Tenant, alias: string) => t.public.post(`/api/model/iris-classifier/alias/${alias}/session`, { token: owner.token });

  it('sets, moves and deletes an alias, each move in its history and in the audit trail', async () => {
    const { owner, v1, v2 } = await twoVersions();
    const requestId = unique('move');
    const set = await setAlias(owner, 'production', v1);
    expect(set.status, set.text).to.equal(200);
    expect(set.body).to.include({ alias: 'production', model_code: 'iris-classifier', version: v1, workspace: owner.ws.name, updated_by: String(owner.user.id) });
    const moved = await t.private.put(aliasPath('production'), { token: owner.token, json: { version: v2 }, headers: { 'x-request-id': requestId } });
    expect(moved.body.version).to.equal(v2);
    // The same version again changes nothing and writes no history.
    expect((await setAlias(owner, 'production', v2)).status).to.equal(200);
    expect((await setAlias(owner, 'staging', v1)).status).to.equal(200);

    expect((await t.private.get(aliasPath('production'), { token: owner.token })).body.version).to.equal(v2);
    const listed = await t.private.get('/api/platform_model/iris-classifier/alias', { token: owner.token });
    expect(listed.body.map((a: any) => [a.alias, a.version])).to.deep.equal([['staging', v1], ['production', v2]]);
    expect(listed.headers.get('x-total-count')).to.equal('2');

    const history = await t.private.get(`${aliasPath('production')}/history`, { token: owner.token });
    expect(history.status, history.text).to.equal(200);
    expect(history.body.map((m: any) => [m.from_version, m.to_version, m.moved_by])).to.deep.equal([[v1, v2, String(owner.user.id)], [null, v1, String(owner.user.id)]]);
    expect(history.body[0].request_id).to.equal(requestId);
    await t.platform.audit.drain();
    const audited = await t.platform.db<AuditRow>('audit_records').where({ request_id: requestId }).first();
    expect(audited).to.include({ action: 'setModelAlias', workspace_id: owner.ws.id, resource_type: 'alias', resource_id: 'production', outcome: 200, actor_user_id: owner.user.id });

    expect((await t.private.delete(aliasPath('production'), { token: owner.token })).status).to.equal(204);
    expect((await t.private.get(aliasPath('production'), { token: owner.token })).status).to.equal(404);
    const after = await t.private.get(`${aliasPath('production')}/history?limit=1`, { token: owner.token });
    expect(after.body.map((m: any) => [m.from_version, m.to_version])).to.deep.equal([[v2, null]]);
    expect(after.headers.get('x-total-count')).to.equal('3');
    expect(after.headers.get('link')).to.match(/rel="next"/);
  });

  it('shows the aliases on the models that list and get them', async () => {
    const { owner, v1, v2 } = await twoVersions();
    await setAlias(owner, 'production', v1);
    await setAlias(owner, 'staging', v1);
    const listed = await t.public.get('/api/model?model_code=iris-classifier', { token: owner.token });
    expect(listed.status, listed.text).to.equal(200);
    expect(Object.fromEntries(listed.body.map((m: any) => [m.model_metadata.version, m.model_metadata.aliases]))).to.deep.equal({ [v1]: ['production', 'staging'], [v2]: [] });
    const one = await t.public.get(`/api/model/iris-classifier/version/${v1}`, { token: owner.token });
    expect(one.body.aliases).to.deep.equal(['production', 'staging']);
  });

  it('opens a session on the version the alias points at and keeps it there after the alias moves or goes', async () => {
    const { owner, v1, v2 } = await twoVersions();
    await setAlias(owner, 'production', v1);
    const before = await openOn(owner, 'production');
    expect(before.status, before.text).to.equal(201);
    expect(before.body).to.deep.include({ alias: 'production', model_key: { model_code: 'iris-classifier', model_version: v1 }, state: 'OPEN' });

    await setAlias(owner, 'production', v2);
    const later = await openOn(owner, 'production');
    expect(later.body.model_key.model_version).to.equal(v2);
    // The first session still runs v1: it is listed and invoked under v1 only.
    const ofV1 = await t.public.get(`/api/model/iris-classifier/version/${v1}/session`, { token: owner.token });
    expect(ofV1.body.map((s: any) => [s.id, s.alias, s.model_key.model_version])).to.deep.equal([[before.body.id, 'production', v1]]);
    await completedPrediction(t.public, owner.token, `/api/model/iris-classifier/version/${v1}`, before.body.id);
    expect((await t.public.get(`/api/model/iris-classifier/version/${v2}/session/${before.body.id}/invocation`, { token: owner.token })).status).to.equal(404);

    expect((await t.private.delete(aliasPath('production'), { token: owner.token })).status).to.equal(204);
    const kept = await t.public.get(`/api/model/iris-classifier/version/${v2}/session`, { token: owner.token });
    expect(kept.body.map((s: any) => [s.id, s.alias, s.model_key.model_version])).to.deep.equal([[later.body.id, 'production', v2]]);
    await completedPrediction(t.public, owner.token, `/api/model/iris-classifier/version/${v2}`, later.body.id);
    expect((await openOn(owner, 'production')).status).to.equal(404);
  });

  it("answers 404 for another workspace's model code, alias and alias session", async () => {
    const { owner, v1 } = await twoVersions();
    await setAlias(owner, 'production', v1);
    const stranger = await tenant(t);
    expect((await t.private.get(aliasPath('production'), { token: stranger.token })).status).to.equal(404);
    expect((await t.private.get('/api/platform_model/iris-classifier/alias', { token: stranger.token })).status).to.equal(404);
    expect((await t.private.get(`${aliasPath('production')}/history`, { token: stranger.token })).status).to.equal(404);
    expect((await setAlias(stranger, 'production', v1)).status).to.equal(404);
    expect((await t.private.delete(aliasPath('production'), { token: stranger.token })).status).to.equal(404);
    expect((await openOn(stranger, 'production')).status).to.equal(404);
    // Nothing the stranger did moved it.
    expect((await t.private.get(aliasPath('production'), { token: owner.token })).body.version).to.equal(v1);
  });

  it('answers 400 for a bad alias name, a missing version, a version of another model code and an unknown version', async () => {
    const { owner, v1, other } = await twoVersions();
    for (const name of ['Production', '1st', 'a'.repeat(41), 'has_underscore']) {
      const reply = await setAlias(owner, name, v1);
      expect(reply.status, name).to.equal(400);
      expect(reply.body.message_code).to.equal('validation_error');
      expect((await openOn(owner, name)).status, name).to.equal(400);
    }
    const missing = await t.private.put(aliasPath('production'), { token: owner.token, json: {} });
    expect(missing.status).to.equal(400);
    const ofOther = await setAlias(owner, 'production', other);
    expect(ofOther.status).to.equal(400);
    expect(ofOther.body.message).to.match(/version/);
    expect((await setAlias(owner, 'production', 'never-registered')).status).to.equal(400);
    expect((await setAlias(owner, 'production', v1, 'no-such-model')).status).to.equal(404);
    expect((await t.private.get(`${aliasPath('production')}/history`, { token: owner.token })).status).to.equal(404);
  });

  it('lets members read aliases and open sessions on them, and only supervisors set, delete and read history', async () => {
    const { owner, v1 } = await twoVersions();
    await setAlias(owner, 'production', v1);
    const member = await colleague(t, owner, 'user');
    expect((await t.private.get(aliasPath('production'), { token: member.token })).status).to.equal(200);
    expect((await openOn(member, 'production')).status).to.equal(201);
    expect((await setAlias(member, 'production', v1)).status).to.equal(403);
    expect((await t.private.delete(aliasPath('production'), { token: member.token })).status).to.equal(403);
    expect((await t.private.get(`${aliasPath('production')}/history`, { token: member.token })).status).to.equal(403);
  });

  it('refuses to delete a version an alias points at, until the alias moves', async () => {
    const { owner, v1, v2 } = await twoVersions();
    await setAlias(owner, 'production', v1);
    const refused = await t.private.delete(`/api/platform_model/iris-classifier/version/${v1}`, { token: owner.token });
    expect(refused.status, refused.text).to.equal(409);
    expect(refused.body.message_code).to.equal('alias_in_use');
    await setAlias(owner, 'production', v2);
    expect((await t.private.delete(`/api/platform_model/iris-classifier/version/${v1}`, { token: owner.token })).status).to.equal(204);
    const deleted = await setAlias(owner, 'production', v1);
    expect(deleted.status).to.equal(400);
  });

  it('replays an alias session opened again with the same Idempotency-Key, even after the alias moved', async () => {
    const { owner, v1, v2 } = await twoVersions();
    await setAlias(owner, 'production', v1);
    const headers = { 'idempotency-key': unique('open') };
    const first = await t.public.post('/api/model/iris-classifier/alias/production/session', { token: owner.token, headers });
    await setAlias(owner, 'production', v2);
    const again = await t.public.post('/api/model/iris-classifier/alias/production/session', { token: owner.token, headers });
    expect(again.status).to.equal(201);
    expect(again.body).to.deep.equal(first.body);
  });

  it('leaves the alias where it was when its history row cannot be written', async () => {
    const { owner, v1, v2 } = await twoVersions();
    await setAlias(owner, 'production', v1);
    const failingHistory = { ...modelAliasesStore, appendMove: () => Promise.reject(new Error('history unavailable')) };
    const stores = { aliases: failingHistory, policies: aliasPoliciesStore, models: modelsStore };
    const service = new ModelAliasesService(t.platform.db, stores, new AliasPoliciesService(t.platform.db, stores));
    const principal = { user: { id: owner.user.id }, workspace: owner.ws } as Principal;
    let failed: unknown;
    await service.set(principal, 'iris-classifier', 'production', v2, null).catch((error: unknown) => (failed = error));
    expect(String(failed)).to.match(/history unavailable/);
    await service.set(principal, 'iris-classifier', 'staging', v2, null).catch(() => undefined);
    expect((await t.private.get(aliasPath('production'), { token: owner.token })).body.version).to.equal(v1);
    expect((await t.private.get(aliasPath('staging'), { token: owner.token })).status).to.equal(404);
  });

  it('keeps one unbroken history when many moves race, each starting where the one before ended', async () => {
    const { owner, v1, v2 } = await twoVersions();
    const replies = await Promise.all(Array.from({ length: 12 }, (_, i) => setAlias(owner, 'production', i % 2 ? v2 : v1)));
    expect(replies.map((r) => r.status)).to.deep.equal(replies.map(() => 200));
    const moves = (await t.private.get(`${aliasPath('production')}/history?limit=100`, { token: owner.token })).body.reverse();
    expect(moves[0].from_version).to.equal(null);
    for (let i = 1; i < moves.length; i++) expect(moves[i].from_version, `move ${i}`).to.equal(moves[i - 1].to_version);
    expect(moves.at(-1).to_version).to.equal((await t.private.get(aliasPath('production'), { token: owner.token })).body.version);
  });

  it("resolves the same alias name in each workspace to that workspace's own version", async () => {
    const a = await twoVersions();
    const b = await twoVersions();
    await setAlias(a.owner, 'production', a.v1);
    await setAlias(b.owner, 'production', b.v2);
    expect((await openOn(a.owner, 'production')).body.model_key.model_version).to.equal(a.v1);
    expect((await openOn(b.owner, 'production')).body.model_key.model_version).to.equal(b.v2);
    // Another workspace's version of the same model code is not this one's to point at.
    expect((await setAlias(b.owner, 'production', a.v1)).status).to.equal(400);
    const history = await t.private.get(`${aliasPath('production')}/history`, { token: b.owner.token });
    expect(history.body.map((m: any) => m.to_version)).to.deep.equal([b.v2]);
  });
});
