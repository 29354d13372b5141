import crypto from 'node:crypto';
import { expect } from 'chai';
import { parseOidcConnections, withClientSecrets } from '../../kernel/config/oidc.js';
import { createWorkspace } from '../../features/identity/admin.js';
import { startTestPlatform, unique, type TestPlatform } from '../support/platform.js';
import { KeycloakAdmin, TestBrowser, keycloakEnv, passKeycloak } from '../support/keycloak.js';

// What one source can hold of the auth server through anonymous sign-in
// starts, and two first sign-ins of one person at once, against the real Keycloak.

const PER_SOURCE = 3;

/** An address of its own for each call, so the windows of earlier runs in the shared database never count. */
const freshSource = () => `198.18.${crypto.randomInt(256)}.${crypto.randomInt(1, 255)}`;

describe('single sign-on starts: bounded per source', function () {
  this.timeout(120_000);
  let t: TestPlatform;
  let admin: KeycloakAdmin;
  const publicDashboard = 'http://127.0.0.1:9/dashboard';

  before(async () => {
    const env = keycloakEnv();
    const team = unique('starts');
    const connections = parseOidcConnections(
      JSON.stringify([
        {
          id: 'keycloak',
          display_name: 'Keycloak',
          issuer: env.issuer,
          client_id: env.clientId,
          client_secret_env: 'TEST_SSO_CLIENT_SECRET',
          workspace_roles: [{ group: 'ml-team-a', workspace: team, role: 'user' }],
          allowed_email_domains: ['example.test'],
          create_users: true,
        },
      ]),
    );
    t = await startTestPlatform({
      oidcConnections: withClientSecrets(connections, { TEST_SSO_CLIENT_SECRET: env.clientSecret }),
      dashboardUrl: publicDashboard,
      ssoStartsPerSource: PER_SOURCE,
      // The sources of these tests come in X-Forwarded-For, as behind the chart's ingress.
      trustProxy: '1',
    });
    await createWorkspace(t.platform.db, team);
    admin = await KeycloakAdmin.connect();
  });
  after(() => t?.close());

  const local = (url: string) => `${t.auth.baseUrl}${url.slice(new URL(publicDashboard).origin.length)}`;
  const start = (browser: TestBrowser, source: string) => browser.request(`${t.auth.baseUrl}/dashboard/sso/keycloak`, { headers: { 'x-forwarded-for': source } });
  const pendingRows = async () => Number((await t.platform.db('sso_sign_ins').count({ n: '*' }).first())!.n);

  it('refuses a source past its unfinished starts with 429, and keeps no row for it; another source still starts', async () => {
    const noisy = freshSource();
    for (let i = 0; i < PER_SOURCE; i += 1) expect((await start(new TestBrowser(), noisy)).status).to.equal(303);
    const before = await pendingRows();
    const refused = await start(new TestBrowser(), noisy);
    expect(refused.status, refused.text).to.equal(429);
    expect(await pendingRows()).to.equal(before);
    expect((await start(new TestBrowser(), freshSource())).status).to.equal(303);
  });

  it('takes a finished sign-in back: the source may start again', async () => {
    const source = freshSource();
    const user = await admin.createUser(['ml-team-a']);
    const browser = new TestBrowser();
    const first = await start(browser, source);
    for (let i = 1; i < PER_SOURCE; i += 1) expect((await start(new TestBrowser(), source)).status).to.equal(303);
    expect((await start(new TestBrowser(), source)).status).to.equal(429);
    const back = await passKeycloak(browser, first.location!, user.username, user.password);
    expect((await browser.request(local(back))).status).to.equal(200);
    expect((await start(new TestBrowser(), source)).status).to.equal(303);
  });

  it('creates one account for two first sign-ins of one person at once', async () => {
    const user = await admin.createUser(['ml-team-a']);
    const browsers = [new TestBrowser(), new TestBrowser()];
    const backs = await Promise.all(browsers.map(async (browser) => passKeycloak(browser, (await start(browser, freshSource())).location!, user.username, user.password)));
    const pages = await Promise.all(backs.map((back, i) => browsers[i]!.request(local(back))));
    expect(pages.map((page) => page.status)).to.deep.equal([200, 200]);
    const accounts = await t.platform.db('users').where({ email: user.email });
    expect(accounts).to.have.length(1);
    expect(await t.platform.db('sso_identities').where({ user_id: accounts[0].id })).to.have.length(1);
  });
});
