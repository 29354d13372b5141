import crypto from 'node:crypto';
import { expect } from 'chai';
import { login, makeStaff, startTestPlatform, unique, type TestPlatform } from '../../test/support/platform.js';
import { colleague, tenant, type Tenant } from '../../test/support/fixtures.js';
import { MUTATING, sendPlain, servedOperations, type ServedOperation } from '../../test/support/documented-operations.js';
import { until } from '../../test/support/until.js';
import type { AuditRow } from '../../features/audit/store.js';

// The audit trail as an operator relies on it: every state-changing
// operation of the three documents leaves exactly one record (a new
// operation is covered as soon as it is documented), tenants read only
// their own, and no record holds a credential.

describe('audit trail', () => {
  let t: TestPlatform;
  let a: Tenant;
  let b: Tenant;
  let operations: ServedOperation[];

  before(async () => {
    t = await startTestPlatform({ exposeTokenApi: true });
    a = await tenant(t);
    b = await tenant(t);
    operations = await servedOperations({ auth: t.auth, private: t.private, public: t.public });
  });
  after(() => t.close());

  const recordsOf = async (requestId: string) => {
    await t.platform.audit.drain();
    return t.platform.db<AuditRow>('audit_records').where({ request_id: requestId });
  };
  const recorded = async (requestId: string, count = 1) => {
    await until(async () => (await recordsOf(requestId)).length >= count, `the audit record of ${requestId}`);
    return recordsOf(requestId);
  };

  it('appends exactly one record, named by its operationId, for every state-changing operation of the three servers', async () => {
    const mutating = operations.filter((op) => MUTATING.has(op.method));
    expect(mutating.length).to.be.greaterThan(30);
    const sent = [];
    for (const operation of mutating) {
      const requestId = unique('audit');
      const reply = await sendPlain(operation, { token: a.token, headers: { 'x-request-id': requestId } });
      sent.push({ operation, requestId, status: reply.status });
    }
    for (const { operation, requestId, status } of sent) {
      const rows = await recorded(requestId);
      expect(rows, `${operation.operationId}: ${rows.length} records`).to.have.length(1);
      expect(rows[0], operation.operationId).to.include({ action: operation.operationId, outcome: status, method: operation.method.toUpperCase() });
      expect(rows[0]!.trace_id).to.equal(null);
    }
  });

  it('names the user a successful log-in signed in, and its workspace', async () => {
    const requestId = unique('login');
    const reply = await t.auth.post('/api/auth/token/obtain', { json: { email: a.user.email, password: a.user.password, workspace: a.ws.name }, headers: { 'x-request-id': requestId } });
    expect(reply.status).to.equal(200);
    const [row] = await recorded(requestId);
    expect(row).to.include({ action: 'obtainToken', outcome: 200, actor_type: 'user', actor_user_id: a.user.id, workspace_id: a.ws.id });
  });

  it('records who did what to which resource: actor, workspace, target, outcome and source address', async () => {
    const requestId = unique('invite');
    const email = `${unique('invitee')}@example.test`;
    const reply = await t.auth.post('/api/auth/invitation', { token: a.token, json: { email, role: 'user' }, headers: { 'x-request-id': requestId } });
    expect(reply.status).to.equal(201);
    const [row] = await recorded(requestId);
    expect(row).to.include({ actor_type: 'user', actor_user_id: a.user.id, workspace_id: a.ws.id, action: 'createInvitation', resource_type: 'invitation', resource_id: String(reply.body.id), outcome: 201, path: '/api/auth/invitation' });
    expect(row!.source_address).to.match(/127\.0\.0\.1/);
  });

  it('records refused requests (401, 403) on reads too, with the actor when one was authenticated', async () => {
    const member = await colleague(t, a, 'user');
    const forbidden = unique('forbidden');
    expect((await t.auth.get('/api/auth/audit', { token: member.token, headers: { 'x-request-id': forbidden } })).status).to.equal(403);
    expect((await recorded(forbidden))[0]).to.include({ action: 'listAuditRecords', outcome: 403, actor_user_id: member.user.id });
    const anonymous = unique('anonymous');
    expect((await t.private.get('/api/deployment', { headers: { 'x-request-id': anonymous } })).status).to.equal(401);
    expect((await recorded(anonymous))[0]).to.include({ action: 'listDeployments', outcome: 401, actor_type: 'anonymous' });
  });

  it('lists a supervisor its workspace records only, staff every record, and a member none', async () => {
    const mine = unique('mine');
    const theirs = unique('theirs');
    await t.private.post('/api/deployment', { token: a.token, json: {}, headers: { 'x-request-id': mine } });
    await t.private.post('/api/deployment', { token: b.token, json: {}, headers: { 'x-request-id': theirs } });
    await recorded(mine);
    await recorded(theirs);

    const asA = await t.auth.get('/api/auth/audit?action=createDeployment&limit=1000', { token: a.token });
    expect(asA.status).to.equal(200);
    expect(asA.body.map((r: { request_id: string }) => r.request_id)).to.include(mine).and.not.include(theirs);
    expect(asA.body.every((r: { workspace_id: number }) => r.workspace_id === a.ws.id)).to.equal(true);
    const askingForB = await t.auth.get(`/api/auth/audit?workspace_id=${b.ws.id}`, { token: a.token });
    expect(askingForB.status, 'another workspace is a 404').to.equal(404);
    expect((await t.auth.get(`/api/auth/audit?workspace_id=${a.ws.id}`, { token: a.token })).status).to.equal(200);

    const staff = await makeStaff(t);
    const all = await t.auth.get(`/api/auth/audit?action=createDeployment&limit=1000`, { token: staff.token });
    expect(all.body.map((r: { request_id: string }) => r.request_id)).to.include.members([mine, theirs]);
    const onlyB = await t.auth.get(`/api/auth/audit?workspace_id=${b.ws.id}&limit=1000`, { token: staff.token });
    expect(onlyB.body.map((r: { request_id: string }) => r.request_id)).to.include(theirs).and.not.include(mine);

    const member = await colleague(t, a, 'user');
    expect((await t.auth.get('/api/auth/audit', { token: member.token })).status).to.equal(403);
  });

  it('filters by actor, action, resource and time, and pages with the Link header', async () => {
    const ids = [unique('page'), unique('page'), unique('page')];
    const key = unique('dep');
    for (const id of ids) await t.private.delete(`/api/deployment/${key}`, { token: a.token, headers: { 'x-request-id': id } });
    for (const id of ids) await recorded(id);
    const query = `actor=${a.user.id}&action=deleteDeployment&resource_type=deployment&resource_id=${key}`;
    const first = await t.auth.get(`/api/auth/audit?${query}&limit=2`, { token: a.token });
    expect(first.headers.get('x-total-count')).to.equal('3');
    expect(first.body.map((r: { request_id: string }) => r.request_id)).to.deep.equal([ids[2], ids[1]]);
    const next = /<([^>]+)>; rel="next"/.exec(first.headers.get('link') ?? '')![1]!;
    const second = await t.auth.get(next, { token: a.token });
    expect(second.body.map((r: { request_id: string }) => r.request_id)).to.deep.equal([ids[0]]);
    const later = await t.auth.get(`/api/auth/audit?${query}&created_after=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`, { token: a.token });
    expect(later.body).to.deep.equal([]);
  });

  it('never holds a password, token, secret key or connector secret, whatever the requests carried', async () => {
    const secret = `s3cret-${crypto.randomBytes(12).toString('hex')}`;
    const body = { password: secret, token: secret, secret_key: secret, client_secret: secret, server_proxy_pat: secret, tracking_server_pat: secret, refresh: secret };
    const since = new Date(Date.now() - 1000);
    const invited = await t.auth.post('/api/auth/invitation', { token: a.token, json: { email: `${unique('x')}@example.test`, role: 'user' } });
    const invitationToken = new URL(invited.body.invitation_url).searchParams.get('token')!;
    const accept = unique('accept');
    await t.auth.post(`/api/auth/invitation/${invitationToken}/accept`, { token: b.token, headers: { 'x-request-id': accept } });
    for (const operation of operations.filter((op) => MUTATING.has(op.method))) {
      await operation.client.request(operation.method.toUpperCase(), operation.path.replace(/\{[^}]+\}/g, secret), { token: a.token, json: body, headers: { 'idempotency-key': secret } });
    }
    const refresh = (await login(t.auth, a.user, a.ws.name)).refresh;
    await t.auth.post('/api/auth/token/refresh', { json: { refresh } });
    await recorded(accept);
    await until(async () => (await t.platform.db('audit_records').where('created_at', '>=', since).count('* as n').first())!.n !== '0', 'records');
    await t.platform.audit.drain();
    await new Promise((resolve) => setTimeout(resolve, 100));
    await t.platform.audit.drain();
    const text = JSON.stringify(await t.platform.db('audit_records').where('created_at', '>=', since));
    for (const credential of [invitationToken, a.token, b.token, refresh]) expect(text).to.not.include(credential);
    expect((await recordsOf(accept))[0]!.path).to.equal('/api/auth/invitation/[redacted]/accept');
    // Secrets sent where an identifier goes (a path parameter) are the caller's to choose; the body's and headers' never appear.
    const withSecret = (await t.platform.db<AuditRow>('audit_records').where('created_at', '>=', since)).filter((row) => JSON.stringify({ ...row, path: '', resource_id: '' }).includes(secret));
    expect(withSecret).to.deep.equal([]);
  });

  it('refuses to change a record: the table is append-only', async () => {
    const requestId = unique('frozen');
    await t.private.get('/api/deployment', { headers: { 'x-request-id': requestId } });
    await recorded(requestId);
    let refused: unknown;
    await t.platform.db('audit_records').where({ request_id: requestId }).update({ outcome: 200 }).catch((error: unknown) => (refused = error));
    expect(String(refused)).to.match(/append-only/);
  });
});

describe('audit trail under a flood of refused requests', () => {
  let t: TestPlatform;
  let clock = Date.now();

  before(async () => {
    t = await startTestPlatform({ auditRefusedPerMinute: 3 }, () => clock);
  });
  after(() => t.close());

  it('records failed logins, at most the limit per source address and action per minute, and counts the rest', async () => {
    const ids: string[] = [];
    const user = { email: `${unique('nobody')}@example.test`, password: 'wrong-password-1' };
    for (let i = 0; i < 10; i++) {
      const id = unique('failed');
      ids.push(id);
      expect((await t.auth.post('/api/auth/token/obtain', { json: user, headers: { 'x-request-id': id } })).status).to.equal(401);
    }
    clock += 61_000;
    const later = unique('failed');
    await t.auth.post('/api/auth/token/obtain', { json: user, headers: { 'x-request-id': later } });
    await until(async () => (await t.platform.db('audit_records').where({ request_id: later })).length === 1, 'the record after the window');
    await t.platform.audit.drain();
    const rows = await t.platform.db<AuditRow>('audit_records').whereIn('request_id', [...ids, later]).orderBy('created_at');
    expect(rows.map((r) => r.request_id)).to.deep.equal([...ids.slice(0, 3), later]);
    expect(rows.every((r) => r.action === 'obtainToken' && r.outcome === 401 && r.actor_type === 'anonymous')).to.equal(true);
    expect(rows[3]!.suppressed).to.equal(7);
    expect(t.platform.audit.dropped).to.equal(7);
    expect((await t.auth.get('/metrics')).text).to.match(/^didyma_audit_records_dropped_total 7$/m);
  });
});
