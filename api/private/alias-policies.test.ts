import { expect } from 'chai';
import { startTestPlatform, unique, type TestPlatform } from '../../test/support/platform.js';
import { colleague, demoDeployment, filesystemStorage, modelPayload, startDemoModelServer, tenant, upload, type Tenant } from '../../test/support/fixtures.js';
import type { DemoModelServer } from '../../demo/model-server/server.js';
import type { AuditRow } from '../../features/audit/store.js';
import { bucketOf } from '../../features/models/alias-policy.js';
import { AliasPoliciesService } from '../../features/models/alias-policies.service.js';
import { aliasPoliciesStore } from '../../features/models/alias-policies.store.js';
import { modelAliasesStore } from '../../features/models/aliases.store.js';
import { modelsStore } from '../../features/models/store.js';
import type { Principal } from '../../features/auth/principal.js';

describe('traffic policies of model aliases', () => {
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

  /** A supervisor's workspace with iris-classifier at three fresh versions (iris-explainer at a fourth), `production` on v1. */
  async function threeVersions() {
    const owner = await tenant(t);
    await demoDeployment(t.private, owner.token, demo.url);
    const card = (await upload(t.private, owner.token, await filesystemStorage(t.private, owner.token), '# Iris')).file_id;
    const [v1, v2, v3, other] = [unique('v1'), unique('v2'), unique('v3'), unique('o')];
    for (const [code, version] of [['iris-classifier', v1], ['iris-classifier', v2], ['iris-classifier', v3], ['iris-explainer', other]] as const) {
      const reply = await t.private.post('/api/platform_model', { token: owner.token, json: modelPayload(code, version, card) });
      expect(reply.status, reply.text).to.equal(201);
    }
    expect((await t.private.put(aliasPath, { token: owner.token, json: { version: v1 } })).status).to.equal(200);
    return { owner, v1, v2, v3, other };
  }

  const aliasPath = '/api/platform_model/iris-classifier/alias/production';
  const policyPath = `${aliasPath}/policy`;
  const setPolicy = (owner: Tenant, json: unknown, headers: Record<string, string> = {}) => t.private.put(policyPath, { token: owner.token, json, headers });
  const open = (owner: Tenant, headers: Record<string, string> = {}) => t.public.post('/api/model/iris-classifier/alias/production/session', { token: owner.token, headers });
  const versionOf = async (owner: Tenant, headers: Record<string, string> = {}) => {
    const reply = await open(owner, headers);
    expect(reply.status, reply.text).to.equal(201);
    return reply.body.model_key.model_version as string;
  };

  it('sets, shows with the alias, replaces and deletes a policy, each change in the history and the audit trail', async () => {
    const { owner, v1, v2, v3 } = await threeVersions();
    const requestId = unique('policy');
    const set = await setPolicy(owner, { weights: [{ version: v2, weight: 10 }, { version: v1, weight: 90 }], shadows: [v3] }, { 'x-request-id': requestId });
    expect(set.status, set.text).to.equal(200);
    const policy = { sticky: 'session', weights: [{ version: v1, weight: 90 }, { version: v2, weight: 10 }], shadows: [v3] };
    expect(set.body).to.deep.include({ ...policy, updated_by: String(owner.user.id) });
    expect((await t.private.get(policyPath, { token: owner.token })).body).to.deep.equal(set.body);
    expect((await t.private.get(aliasPath, { token: owner.token })).body.policy).to.deep.equal(set.body);
    const listed = await t.private.get('/api/platform_model/iris-classifier/alias', { token: owner.token });
    expect(listed.body[0].policy).to.deep.equal(set.body);
    // The same policy again writes no history.
    expect((await setPolicy(owner, policy)).status).to.equal(200);

    const user = { sticky: 'user', weights: [{ version: v1, weight: 50 }, { version: v3, weight: 50 }], shadows: [] };
    expect((await setPolicy(owner, user)).body).to.deep.include(user);
    expect((await t.private.delete(policyPath, { token: owner.token })).status).to.equal(204);
    expect((await t.private.get(policyPath, { token: owner.token })).status).to.equal(404);
    expect((await t.private.get(aliasPath, { token: owner.token })).body.policy).to.equal(null);
    expect((await t.private.delete(policyPath, { token: owner.token })).status).to.equal(404);

    const history = (await t.private.get(`${aliasPath}/history`, { token: owner.token })).body;
    expect(history.map((m: any) => [m.from_version, m.to_version, m.from_policy, m.to_policy])).to.deep.equal([
      [v1, v1, user, null],
      [v1, v1, policy, user],
      [v1, v1, null, policy],
      [null, v1, null, null],
    ]);
    expect(history[2]).to.include({ moved_by: String(owner.user.id), request_id: requestId });
    await t.platform.audit.drain();
    const audited = await t.platform.db<AuditRow>('audit_records').where({ request_id: requestId }).first();
    expect(audited).to.include({ action: 'setAliasPolicy', workspace_id: owner.ws.id, outcome: 200, actor_user_id: owner.user.id });
  });

  it('sends about 10% of 1,000 new sessions to the 10% version, each replayed open to its first version', async () => {
    const { owner, v1, v2 } = await threeVersions();
    expect((await setPolicy(owner, { weights: [{ version: v1, weight: 90 }, { version: v2, weight: 10 }] })).status).to.equal(200);
    const counts = new Map<string, number>();
    for (let batch = 0; batch < 20; batch++) {
      const versions = await Promise.all(Array.from({ length: 50 }, () => versionOf(owner)));
      for (const version of versions) counts.set(version, (counts.get(version) ?? 0) + 1);
    }
    expect([...counts.keys()].sort()).to.deep.equal([v1, v2].sort());
    // Binomial(1000, 0.1): mean 100, standard deviation 9.49; 4 standard deviations either side (62..138)
    // fail a correct split about once in 16,000 runs.
    expect(counts.get(v2)).to.be.within(62, 138);

    // A retried open (same Idempotency-Key) is the same session on the same version, whichever it was.
    const keys = Array.from({ length: 30 }, () => unique('open'));
    const first = await Promise.all(keys.map((key) => open(owner, { 'idempotency-key': key })));
    const again = await Promise.all(keys.map((key) => open(owner, { 'idempotency-key': key })));
    expect(again.map((r) => [r.body.id, r.body.model_key.model_version])).to.deep.equal(first.map((r) => [r.body.id, r.body.model_key.model_version]));
  });

  it("keeps each user of a user-sticky policy on the one version their user's hash picks, and spreads a session-sticky one", async () => {
    const { owner, v1, v2 } = await threeVersions();
    const weights = [{ version: v1, weight: 50 }, { version: v2, weight: 50 }];
    expect((await setPolicy(owner, { sticky: 'user', weights })).status).to.equal(200);
    const aliasId = (await t.platform.db('model_aliases').where({ workspace_id: owner.ws.id, alias: 'production' }).first('id')).id as number;
    // Eight users: a hash other than the documented one would place all eight as it does once in 256.
    const users = [owner, ...(await Promise.all(Array.from({ length: 7 }, () => colleague(t, owner))))];
    for (const who of users) {
      const versions = new Set(await Promise.all(Array.from({ length: 30 }, () => versionOf(who))));
      expect([...versions]).to.deep.equal([bucketOf(`${aliasId}:user:${who.user.id}`) < 50 ? v1 : v2]);
    }
    // Per session, one user's 30 sessions all on one version of a 50/50 split: once in 2^29.
    expect((await setPolicy(owner, { sticky: 'session', weights })).status).to.equal(200);
    const spread = new Set(await Promise.all(Array.from({ length: 30 }, () => versionOf(owner))));
    expect([...spread].sort()).to.deep.equal([v1, v2].sort());
  });

  it('moves the primary weight with the alias and keeps the other targets', async () => {
    const { owner, v1, v2, v3 } = await threeVersions();
    await setPolicy(owner, { weights: [{ version: v1, weight: 80 }, { version: v2, weight: 20 }], shadows: [v3] });
    // To a version the policy does not name: it takes the primary's weight.
    const extra = unique('v4');
    const card = (await upload(t.private, owner.token, await filesystemStorage(t.private, owner.token), '# Iris')).file_id;
    expect((await t.private.post('/api/platform_model', { token: owner.token, json: modelPayload('iris-classifier', extra, card) })).status).to.equal(201);
    const moved = await t.private.put(aliasPath, { token: owner.token, json: { version: extra } });
    expect(moved.body.policy).to.deep.include({ weights: [{ version: extra, weight: 80 }, { version: v2, weight: 20 }], shadows: [v3] });
    // To the weighted candidate (a promotion): its weight joins the primary's.
    const promoted = await t.private.put(aliasPath, { token: owner.token, json: { version: v2 } });
    expect(promoted.body.policy).to.deep.include({ weights: [{ version: v2, weight: 100 }], shadows: [v3] });
    // To the shadow: it is the primary, no longer a shadow.
    const shadowed = await t.private.put(aliasPath, { token: owner.token, json: { version: v3 } });
    expect(shadowed.body.policy).to.deep.include({ weights: [{ version: v3, weight: 100 }], shadows: [] });
    const history = (await t.private.get(`${aliasPath}/history?limit=1`, { token: owner.token })).body;
    expect(history[0]).to.deep.include({ from_version: v2, to_version: v3, from_policy: { sticky: 'session', weights: [{ version: v2, weight: 100 }], shadows: [v3] } });
    expect(await versionOf(owner)).to.equal(v3);
  });

  it('refuses to delete a version a policy weights or shadows, until the policy lets it go', async () => {
    const { owner, v1, v2, v3 } = await threeVersions();
    await setPolicy(owner, { weights: [{ version: v1, weight: 90 }, { version: v2, weight: 10 }], shadows: [v3] });
    for (const version of [v2, v3]) {
      const refused = await t.private.delete(`/api/platform_model/iris-classifier/version/${version}`, { token: owner.token });
      expect(refused.status, refused.text).to.equal(409);
      expect(refused.body.message_code).to.equal('alias_in_use');
    }
    await setPolicy(owner, { weights: [{ version: v1, weight: 100 }] });
    expect((await t.private.delete(`/api/platform_model/iris-classifier/version/${v2}`, { token: owner.token })).status).to.equal(204);
    const deleted = await setPolicy(owner, { weights: [{ version: v1, weight: 90 }, { version: v2, weight: 10 }] });
    expect(deleted.status).to.equal(400);
    expect(deleted.body.message).to.match(/weights\[1\]\.version/);
  });

  it('answers 400 naming what is wrong with a policy, and changes nothing', async () => {
    const { owner, v1, v2, v3, other } = await threeVersions();
    const w = (version: string, weight: number) => ({ version, weight });
    const cases: Array<[unknown, RegExp]> = [
      [{ weights: [w(v1, 90), w(v2, 20)] }, /sum to 110/],
      [{ weights: [w(v1, 90), w(v2, 5)] }, /sum to 95/],
      [{ weights: [w(v1, 101)] }, /weight/],
      [{ weights: [w(v1, 110), w(v2, -10)] }, /weight/],
      [{ weights: [w(v1, 50.5), w(v2, 49.5)] }, /weight/],
      [{ weights: [w(v1, 90), w(other, 10)] }, /weights\[1\]\.version/],
      [{ weights: [w(v1, 90), w('never-registered', 10)] }, /weights\[1\]\.version/],
      [{ weights: [w(v1, 90), w(v2, 10)], shadows: [other] }, /shadows\[0\]/],
      [{ weights: [w(v1, 80), w(v1, 20)] }, /weighted twice/],
      [{ weights: [w(v1, 90), w(v2, 10)], shadows: [v3, v3] }, /shadow twice/],
      [{ weights: [w(v1, 90), w(v2, 10)], shadows: [v2] }, /also weighted/],
      [{ weights: [w(v2, 90), w(v3, 10)] }, /alias's own version/],
      [{ weights: [w(v1, 100)], sticky: 'request' }, /sticky/],
      [{ weights: [] }, /weights/],
      [{ weights: [w(v1, 100)], split: 'even' }, /split/],
    ];
    for (const [body, message] of cases) {
      const reply = await setPolicy(owner, body);
      expect(reply.status, JSON.stringify(body)).to.equal(400);
      expect(reply.body.message, JSON.stringify(body)).to.match(message);
    }
    expect((await t.private.get(policyPath, { token: owner.token })).status).to.equal(404);
    expect((await t.private.get(`${aliasPath}/history`, { token: owner.token })).body).to.have.length(1);
  });

  it("answers 404 for another workspace's alias policy, and lets members read but not write it", async () => {
    const { owner, v1, v2 } = await threeVersions();
    const policy = { weights: [{ version: v1, weight: 90 }, { version: v2, weight: 10 }] };
    await setPolicy(owner, policy);
    const stranger = await tenant(t);
    expect((await t.private.get(policyPath, { token: stranger.token })).status).to.equal(404);
    expect((await setPolicy(stranger, policy)).status).to.equal(404);
    expect((await t.private.delete(policyPath, { token: stranger.token })).status).to.equal(404);
    // The stranger's own alias of the same name cannot name the owner's versions either.
    const theirs = await threeVersions();
    expect((await setPolicy(theirs.owner, { weights: [{ version: theirs.v1, weight: 90 }, { version: v2, weight: 10 }] })).status).to.equal(400);
    expect(await versionOf(theirs.owner)).to.equal(theirs.v1);

    const member = await colleague(t, owner);
    expect((await t.private.get(policyPath, { token: member.token })).status).to.equal(200);
    expect((await setPolicy(member, policy)).status).to.equal(403);
    expect((await t.private.delete(policyPath, { token: member.token })).status).to.equal(403);
    expect((await t.private.get(policyPath, { token: owner.token })).body.weights).to.deep.equal(policy.weights);
  });

  it('drops the policy with its alias, the history keeping what it was', async () => {
    const { owner, v1, v2 } = await threeVersions();
    const policy = { sticky: 'session', weights: [{ version: v1, weight: 90 }, { version: v2, weight: 10 }], shadows: [] };
    await setPolicy(owner, policy);
    expect((await t.private.delete(aliasPath, { token: owner.token })).status).to.equal(204);
    expect((await t.private.get(policyPath, { token: owner.token })).status).to.equal(404);
    const history = (await t.private.get(`${aliasPath}/history?limit=1`, { token: owner.token })).body;
    expect(history[0]).to.deep.include({ from_version: v1, to_version: null, from_policy: policy, to_policy: null });
    expect((await t.platform.db('alias_policy_targets').whereIn('model_id', t.platform.db('models').where({ version: v2 }).select('id'))).length).to.equal(0);
    // Nothing holds v2 any more.
    expect((await t.private.delete(`/api/platform_model/iris-classifier/version/${v2}`, { token: owner.token })).status).to.equal(204);
  });

  it('leaves the policy as it was when its history row cannot be written', async () => {
    const { owner, v1, v2 } = await threeVersions();
    const before = (await setPolicy(owner, { weights: [{ version: v1, weight: 90 }, { version: v2, weight: 10 }] })).body;
    const failingHistory = { ...modelAliasesStore, appendMove: () => Promise.reject(new Error('history unavailable')) };
    const service = new AliasPoliciesService(t.platform.db, { aliases: failingHistory, policies: aliasPoliciesStore, models: modelsStore });
    const principal = { user: { id: owner.user.id }, workspace: owner.ws } as Principal;
    let failed: unknown;
    await service.set(principal, 'iris-classifier', 'production', { weights: [{ version: v1, weight: 50 }, { version: v2, weight: 50 }] }, null).catch((error: unknown) => (failed = error));
    expect(String(failed)).to.match(/history unavailable/);
    await service.remove(principal, 'iris-classifier', 'production', null).catch(() => undefined);
    expect((await t.private.get(policyPath, { token: owner.token })).body).to.deep.equal(before);
  });

  it('never keeps a policy naming a version deleted at the same time', async () => {
    const { owner, v1 } = await threeVersions();
    const card = (await upload(t.private, owner.token, await filesystemStorage(t.private, owner.token), '# Iris')).file_id;
    const candidates = Array.from({ length: 6 }, () => unique('c'));
    for (const version of candidates) expect((await t.private.post('/api/platform_model', { token: owner.token, json: modelPayload('iris-classifier', version, card) })).status).to.equal(201);
    // Each candidate raced: a policy weighting it against its deletion; one of the two is refused.
    const raced = await Promise.all(
      candidates.map(async (version) => {
        const [set, deleted] = await Promise.all([
          setPolicy(owner, { weights: [{ version: v1, weight: 90 }, { version, weight: 10 }] }),
          t.private.delete(`/api/platform_model/iris-classifier/version/${version}`, { token: owner.token }),
        ]);
        return [set.status, deleted.status];
      }),
    );
    for (const [set, deleted] of raced) expect([set === 200 || set === 400, deleted === 204 || deleted === 409], `${set} ${deleted}`).to.deep.equal([true, true]);
    const named = await t.platform.db('alias_policy_targets as t').join('models as m', 'm.id', 't.model_id').whereNotNull('m.deleted_at').select('m.version');
    expect(named).to.deep.equal([]);
  });
});
