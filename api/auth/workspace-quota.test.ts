import { expect } from 'chai';
import { colleague, tenant } from '../../test/support/fixtures.js';
import { makeStaff, startTestPlatform, type TestPlatform } from '../../test/support/platform.js';

describe('auth server: a workspace’s quota', () => {
  let t: TestPlatform;
  let staffToken: string;
  before(async () => {
    t = await startTestPlatform();
    staffToken = (await makeStaff(t)).token;
  });
  after(() => t.close());

  const quotaPath = (id: number) => `/api/auth/workspace/${id}/quota`;

  it('starts with weight 1 and no limits, which staff change field by field and clear with null', async () => {
    const { ws } = await tenant(t);
    const initial = await t.auth.get(quotaPath(ws.id), { token: staffToken });
    expect(initial.status).to.equal(200);
    expect(initial.body).to.deep.equal({ workspace_id: ws.id, share_weight: 1, max_in_flight: null, max_queued: null });

    const set = await t.auth.patch(quotaPath(ws.id), { token: staffToken, json: { share_weight: 3, max_in_flight: 4, max_queued: 100 } });
    expect(set.status).to.equal(200);
    expect(set.body).to.deep.equal({ workspace_id: ws.id, share_weight: 3, max_in_flight: 4, max_queued: 100 });

    const cleared = await t.auth.patch(quotaPath(ws.id), { token: staffToken, json: { max_in_flight: null } });
    expect(cleared.body).to.deep.equal({ workspace_id: ws.id, share_weight: 3, max_in_flight: null, max_queued: 100 });
    expect((await t.auth.get(quotaPath(ws.id), { token: staffToken })).body).to.deep.equal(cleared.body);
  });

  it('refuses out-of-range values, unknown fields and an empty change with 400 naming the field', async () => {
    const { ws } = await tenant(t);
    for (const json of [{ share_weight: 0 }, { share_weight: 1001 }, { share_weight: null }, { share_weight: 1.5 }, { max_in_flight: 0 }, { max_queued: -1 }, { max_queued: 'many' }, { weight: 2 }, {}]) {
      const reply = await t.auth.patch(quotaPath(ws.id), { token: staffToken, json });
      expect(reply.status, JSON.stringify(json)).to.equal(400);
      expect(reply.body.message_code).to.equal('validation_error');
      const field = Object.keys(json)[0];
      if (field) expect(JSON.stringify(reply.body), JSON.stringify(json)).to.include(field);
    }
    expect((await t.auth.get(quotaPath(ws.id), { token: staffToken })).body).to.include({ share_weight: 1, max_in_flight: null, max_queued: null });
  });

  it('lets a supervisor read only their own workspace’s quota, and no one but staff change it', async () => {
    const supervisor = await tenant(t, 'supervisor');
    const user = await colleague(t, supervisor, 'user');
    const stranger = await tenant(t, 'supervisor');

    const own = await t.auth.get(quotaPath(supervisor.ws.id), { token: supervisor.token });
    expect(own.status).to.equal(200);
    expect(own.body).to.include({ workspace_id: supervisor.ws.id, share_weight: 1 });
    expect((await t.auth.get(quotaPath(supervisor.ws.id), { token: user.token })).status).to.equal(403);
    expect((await t.auth.get(quotaPath(supervisor.ws.id), { token: stranger.token })).status).to.equal(404);

    for (const token of [supervisor.token, user.token, stranger.token]) {
      const reply = await t.auth.patch(quotaPath(supervisor.ws.id), { token, json: { share_weight: 1000 } });
      expect(reply.status).to.equal(403);
      expect(reply.body.message_code).to.equal('permission_denied');
    }
    expect((await t.auth.get(quotaPath(supervisor.ws.id), { token: staffToken })).body.share_weight).to.equal(1);
  });

  it('answers 404 for an unknown or deleted workspace', async () => {
    expect((await t.auth.get(quotaPath(999999), { token: staffToken })).status).to.equal(404);
    expect((await t.auth.patch(quotaPath(999999), { token: staffToken, json: { max_queued: 1 } })).status).to.equal(404);
    const { ws } = await tenant(t);
    await t.auth.delete(`/api/auth/workspace/${ws.id}`, { token: staffToken });
    expect((await t.auth.patch(quotaPath(ws.id), { token: staffToken, json: { max_queued: 1 } })).status).to.equal(404);
  });
});
