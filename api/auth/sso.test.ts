import { expect } from 'chai';
import { parseOidcConnections, withClientSecrets } from '../../kernel/config/oidc.js';
import { DashboardClient } from '../../test/support/dashboard-client.js';
import { login, makeStaff, makeUser, makeWorkspace, startTestPlatform, type TestPlatform } from '../../test/support/platform.js';

describe('auth server: single sign-on connections', () => {
  let t: TestPlatform;
  before(async () => {
    const connections = parseOidcConnections(
      JSON.stringify([
        {
          id: 'corp',
          display_name: 'Corp',
          issuer: 'https://login.example.test/realms/corp',
          client_id: 'didyma',
          client_secret_env: 'CORP_SECRET',
          workspace_roles: [{ group: 'team-a', workspace: 'team-a', role: 'supervisor' }],
          groups_claim: 'realm_access.roles',
          staff_groups: ['admins'],
          allowed_email_domains: ['example.test'],
        },
        { id: 'public', issuer: 'https://other.example.test', client_id: 'didyma-public' },
      ]),
    );
    t = await startTestPlatform({ oidcConnections: withClientSecrets(connections, { CORP_SECRET: 'the-client-secret' }) });
  });
  after(() => t.close());

  it('lists the connections to staff, never a client secret', async () => {
    const staff = await makeStaff(t);
    const reply = await t.auth.get('/api/auth/sso/connection', { token: staff.token });
    expect(reply.status).to.equal(200);
    expect(reply.text).not.to.contain('the-client-secret');
    expect(reply.body).to.deep.equal([
      {
        id: 'corp',
        display_name: 'Corp',
        issuer: 'https://login.example.test/realms/corp',
        client_id: 'didyma',
        has_client_secret: true,
        scopes: ['openid', 'email', 'profile'],
        groups_claim: 'realm_access.roles',
        workspace_roles: [{ group: 'team-a', workspace: 'team-a', role: 'supervisor' }],
        staff_groups: ['admins'],
        allowed_email_domains: ['example.test'],
        create_users: false,
        require_mapped_group: true,
      },
      {
        id: 'public',
        display_name: 'public',
        issuer: 'https://other.example.test',
        client_id: 'didyma-public',
        has_client_secret: false,
        scopes: ['openid', 'email', 'profile'],
        groups_claim: 'groups',
        workspace_roles: [],
        staff_groups: [],
        allowed_email_domains: [],
        create_users: false,
        require_mapped_group: true,
      },
    ]);
  });

  it('refuses the list to a supervisor', async () => {
    const user = await makeUser(t.platform);
    const ws = await makeWorkspace(t.platform, [[user, 'supervisor']]);
    const reply = await t.auth.get('/api/auth/sso/connection', { token: (await login(t.auth, user, ws.name)).access });
    expect(reply.status).to.equal(403);
  });

  it('shows staff the connections in the dashboard, never a client secret, and nobody else', async () => {
    const staff = await makeStaff(t);
    const client = new DashboardClient(t.auth.baseUrl);
    await client.signIn(staff.user.email, staff.user.password, staff.home.name);
    const page = await client.get('/dashboard/sign-on');
    expect(page.status).to.equal(200);
    expect(page.text).to.contain('https://login.example.test/realms/corp').and.contain('team-a → team-a (supervisor)').and.contain('secret set');
    expect(page.text).not.to.contain('the-client-secret');
    expect((await client.get('/dashboard')).text).to.contain('href="/dashboard/sign-on"');

    const user = await makeUser(t.platform);
    const ws = await makeWorkspace(t.platform, [[user, 'supervisor']]);
    const supervisor = new DashboardClient(t.auth.baseUrl);
    await supervisor.signIn(user.email, user.password, ws.name);
    expect((await supervisor.get('/dashboard/sign-on')).status).to.equal(403);
    expect((await supervisor.get('/dashboard')).text).not.to.contain('href="/dashboard/sign-on"');
  });
});
