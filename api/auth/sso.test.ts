import { expect } from 'chai';
import { parseOidcConnections, withClientSecrets } from '../../kernel/config/oidc.js';
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
});
