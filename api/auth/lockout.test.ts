import { expect } from 'chai';
import { makeStaff, makeUser, makeWorkspace, startTestPlatform, unique, type TestPlatform, type TestUser } from '../../test/support/platform.js';
import { randomAddress } from '../../test/support/sources.js';
import { until } from '../../test/support/until.js';
import type { AuditRow } from '../../features/audit/store.js';

// The attacks of issue 55 on the log-in: a stranger who knows a victim's
// e-mail (or an application's public client_id) fails on purpose, from one
// source and then from many, while the owner logs in as usual.

const PER_SOURCE = 10;
const CEILING = 30;

describe('login lock-out that an attacker cannot aim at a victim', () => {
  let t: TestPlatform;
  let staff: Awaited<ReturnType<typeof makeStaff>>;
  before(async () => {
    // X-Forwarded-For names each request's source, as a proxy in front of the auth server would.
    t = await startTestPlatform({ trustProxy: '1', loginLimitPerSource: PER_SOURCE, loginLimitPerAccount: CEILING, loginLimitPerClient: 100000, loginDelayMaxMs: 100 });
    staff = await makeStaff(t);
  });
  after(() => t.close());

  const obtain = (user: TestUser, password: string, from: string) =>
    t.auth.post('/api/auth/token/obtain', { json: { email: user.email, password }, headers: { 'x-forwarded-for': from } }).then((reply) => reply.status);
  const failFrom = async (user: TestUser, from: string, count: number) => {
    const statuses: number[] = [];
    for (let i = 0; i < count; i++) statuses.push(await obtain(user, 'wrong-password', from));
    return statuses;
  };
  const lockOf = (path: string) => t.auth.get(`/api/auth/lockout/${path}`, { token: staff.token });

  it('an attacker’s eleven wrong passwords from one source do not stop the victim logging in from another', async () => {
    const victim = await makeUser(t.platform);
    const attacker = randomAddress();
    const statuses = await failFrom(victim, attacker, PER_SOURCE + 2);
    expect(statuses).to.deep.equal([...new Array<number>(PER_SOURCE).fill(401), 429, 429]);
    expect(await obtain(victim, victim.password, attacker), 'the attacker’s source stays locked out of the account').to.equal(429);
    expect(await obtain(victim, victim.password, randomAddress()), 'the victim, from anywhere else').to.equal(200);
    expect((await t.auth.get('/healthz')).status).to.equal(200);
  });

  it('an attacker from many sources reaches the account’s ceiling: its owner is delayed, not locked out', async () => {
    const owner = await makeUser(t.platform);
    const home = randomAddress();
    expect(await obtain(owner, owner.password, home)).to.equal(200);
    for (let i = 0; i < 5; i++) expect(await failFrom(owner, randomAddress(), PER_SOURCE)).to.not.include(429);
    const lock = await lockOf(`account/${encodeURIComponent(owner.email)}`);
    expect(lock.body).to.include({ failures: 5 * PER_SOURCE, ceiling: CEILING, locked_sources: 0 });
    expect(lock.body.delay_ms, 'past the ceiling: a delay').to.be.within(1, 100);
    expect(await obtain(owner, owner.password, randomAddress()), 'the owner on a new device: delayed, then in').to.equal(200);
    expect(await obtain(owner, owner.password, home), 'the owner where it logged in before: no delay').to.equal(200);
    expect(await obtain(owner, 'wrong-password', randomAddress()), 'a wrong password is still checked, not locked').to.equal(401);
  });

  it('limits /o/token per client id and source: the public client_id alone cannot lock the application out', async () => {
    const ws = await makeWorkspace(t.platform);
    const { client_id, client_secret } = await t.platform.identity.oauth.create(null, ws.id, { name: 'pipeline', role: 'user' });
    const token = (secret: string, from: string) => t.auth.post('/o/token/', { form: { grant_type: 'client_credentials', client_id, client_secret: secret }, headers: { 'x-forwarded-for': from } }).then((reply) => reply.status);
    const attacker = randomAddress();
    const statuses: number[] = [];
    for (let i = 0; i < PER_SOURCE + 1; i++) statuses.push(await token('guess', attacker));
    expect(statuses).to.deep.equal([...new Array<number>(PER_SOURCE).fill(401), 429]);
    const pipeline = randomAddress();
    expect(await token(client_secret, pipeline), 'the pipeline, from its own source').to.equal(200);
    for (let i = 0; i < 4; i++) {
      const source = randomAddress();
      for (let j = 0; j < PER_SOURCE; j++) await token('guess', source);
    }
    expect((await lockOf(`client/${client_id}`)).body.delay_ms).to.be.greaterThan(0);
    expect(await token(client_secret, pipeline), 'the pipeline’s known source: no delay').to.equal(200);
    expect(await token(client_secret, randomAddress()), 'a new source of the pipeline: delayed, then served').to.equal(200);
  });

  it('shows staff the lock of the account or client they name, lets them lift it, and audits the lift', async () => {
    const victim = await makeUser(t.platform);
    const attacker = randomAddress();
    await failFrom(victim, attacker, PER_SOURCE + 1);
    const seen = await lockOf(`account/${encodeURIComponent(victim.email.toUpperCase())}`);
    expect(seen.status).to.equal(200);
    expect(seen.body).to.include({ kind: 'account', id: victim.email, failures: PER_SOURCE, locked_sources: 1, delay_ms: 0 });
    expect(seen.body.sources[0]).to.include({ locked: true });
    expect(seen.body.sources[0].retry_after).to.be.within(1, 60);
    expect(JSON.stringify(seen.body), 'no address is stored, so none is shown').to.not.include(attacker.split('::')[0]);

    const tenant = await makeUser(t.platform);
    const ws = await makeWorkspace(t.platform, [[tenant, 'supervisor']]);
    const supervisor = (await t.auth.post('/api/auth/token/obtain', { json: { email: tenant.email, password: tenant.password, workspace: ws.name } })).body.access as string;
    expect((await t.auth.get(`/api/auth/lockout/account/${encodeURIComponent(victim.email)}`, { token: supervisor })).status, 'staff only').to.equal(403);
    expect((await t.auth.delete(`/api/auth/lockout/account/${encodeURIComponent(victim.email)}`, { token: supervisor })).status).to.equal(403);

    const requestId = unique('lift');
    const lifted = await t.auth.delete(`/api/auth/lockout/account/${encodeURIComponent(victim.email)}`, { token: staff.token, headers: { 'x-request-id': requestId } });
    expect(lifted.status).to.equal(204);
    expect((await lockOf(`account/${encodeURIComponent(victim.email)}`)).body).to.include({ failures: 0, locked_sources: 0, window_ends_at: null });
    expect(await obtain(victim, 'wrong-password', attacker), 'the source may try again').to.equal(401);
    await until(async () => {
      await t.platform.audit.drain();
      return (await t.platform.db<AuditRow>('audit_records').where({ request_id: requestId })).length === 1;
    }, 'the audit record of the lift');
    const [record] = await t.platform.db<AuditRow>('audit_records').where({ request_id: requestId });
    expect(record).to.include({ action: 'liftAccountLock', actor_user_id: staff.user.id, resource_type: 'account', resource_id: victim.email, outcome: 204 });

    const ws2 = await makeWorkspace(t.platform);
    const { client_id } = await t.platform.identity.oauth.create(null, ws2.id, { name: 'app', role: 'user' });
    for (let i = 0; i < PER_SOURCE + 1; i++) await t.auth.post('/o/token/', { form: { grant_type: 'client_credentials', client_id, client_secret: 'guess' }, headers: { 'x-forwarded-for': attacker } });
    expect((await lockOf(`client/${client_id}`)).body).to.include({ kind: 'client', id: client_id, locked_sources: 1 });
    expect((await t.auth.delete(`/api/auth/lockout/client/${client_id}`, { token: staff.token })).status).to.equal(204);
    expect((await lockOf(`client/${client_id}`)).body).to.include({ failures: 0, locked_sources: 0 });
  });
});
