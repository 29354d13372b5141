import crypto from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { createUser, createWorkspace } from '../../features/identity/admin.js';
import { startTestPlatform, unique, type TestPlatform } from '../support/platform.js';
import { KeycloakAdmin, TestBrowser, keycloakConnections, keycloakEnv, passKeycloak, type Page } from '../support/keycloak.js';
import { pythonCli } from '../support/python-cli.js';

// Single sign-on in the dashboard against a real OpenID Provider: Keycloak
// (scripts/services/keycloak.sh), its own login form filled in over HTTP.

describe('single sign-on through Keycloak', function () {
  this.timeout(120_000);
  let t: TestPlatform;
  let admin: KeycloakAdmin;
  let teamA: { id: number; name: string };
  let teamB: { id: number; name: string };
  /** The dashboard's public URL as the provider knows it; the tests hand its redirects to the test server. */
  const publicDashboard = 'http://127.0.0.1:9/dashboard';

  before(async () => {
    const names = { a: unique('team-a'), b: unique('team-b') };
    const connections = keycloakConnections([
      {
        id: 'keycloak',
        display_name: 'Keycloak',
        workspace_roles: [
          { group: 'ml-team-a', workspace: names.a, role: 'user' },
          { group: 'ml-team-a-supervisors', workspace: names.a, role: 'supervisor' },
          { group: 'ml-team-b', workspace: names.b, role: 'user' },
        ],
        staff_groups: ['platform-admins'],
        allowed_email_domains: ['example.test'],
        create_users: true,
      },
      { id: 'invited-only', display_name: 'Keycloak for invited people', workspace_roles: [{ group: 'ml-team-a', workspace: names.a, role: 'user' }] },
    ]);
    t = await startTestPlatform({ oidcConnections: connections, dashboardUrl: publicDashboard });
    teamA = await createWorkspace(t.platform.db, names.a);
    teamB = await createWorkspace(t.platform.db, names.b);
    admin = await KeycloakAdmin.connect();
  });
  after(() => t?.close());

  /** The test server's address for a URL under the dashboard's public one. */
  const local = (url: string) => `${t.auth.baseUrl}${url.slice(new URL(publicDashboard).origin.length)}`;

  /** Starts a sign-in in `browser` and passes Keycloak's form: the URL Keycloak sends the browser back to. */
  async function throughKeycloak(browser: TestBrowser, user: { username: string; password: string }, connection = 'keycloak', next = ''): Promise<string> {
    const start = await browser.request(`${t.auth.baseUrl}/dashboard/sso/${connection}${next && `?next=${encodeURIComponent(next)}`}`);
    expect(start.status, start.text).to.equal(303);
    expect(start.location).to.match(/^http:\/\/127\.0\.0\.1:\d+\/realms\//);
    return passKeycloak(browser, start.location!, user.username, user.password);
  }

  async function signIn(browser: TestBrowser, user: { username: string; password: string }, connection = 'keycloak', next = ''): Promise<Page> {
    return browser.request(local(await throughKeycloak(browser, user, connection, next)));
  }

  const userOf = (email: string) => t.platform.db('users').where({ email }).first();
  const rolesOf = async (userId: number) =>
    Object.fromEntries((await t.platform.db('memberships').where({ user_id: userId })).map((m: { workspace_id: number; role: string }) => [m.workspace_id, m.role]));
  /** The audit trail's records of the groups' changes to the user: action and resource. */
  async function roleChangesOf(userId: number): Promise<string[]> {
    await t.platform.audit.drain();
    const rows = await t.platform.db('audit_records').where({ actor_user_id: userId }).where('action', 'like', 'sso%').orderBy('created_at');
    return rows.map((r: { action: string; resource_type: string; resource_id: string }) => `${r.action} ${r.resource_type}/${r.resource_id}`);
  }
  const sessionCookie = (browser: TestBrowser) => browser.cookie(new URL(t.auth.baseUrl).host, 'dy_session');

  it('signs a person in with the workspaces, roles and staff their groups give', async () => {
    const person = await admin.createUser(['ml-team-a', 'ml-team-a-supervisors', 'platform-admins']);
    const browser = new TestBrowser();
    const back = await signIn(browser, person);
    expect(back.status, back.text).to.equal(200);
    expect(back.text).to.contain('Signed in');
    expect(sessionCookie(browser)).to.match(/^[A-Za-z0-9_-]{43}$/);
    const user = await userOf(person.email);
    expect(user).to.include({ is_staff: true, password_hash: null });
    expect(await rolesOf(user.id)).to.deep.equal({ [teamA.id]: 'supervisor' });
    expect(await roleChangesOf(user.id)).to.have.members([`ssoSetRole:supervisor workspace/${teamA.id}`, `ssoGrantStaff user/${user.id}`]);
    const home = await browser.request(`${t.auth.baseUrl}/dashboard`);
    expect(home.status).to.equal(200);
    expect(home.text).to.contain(person.email);
    const identity = await t.platform.db('sso_identities').where({ user_id: user.id }).first();
    expect(identity).to.include({ issuer: keycloakEnv().issuer, connection_id: 'keycloak' });
  });

  it('takes a role away at the next sign-in once the person left the group', async () => {
    const person = await admin.createUser(['ml-team-a', 'ml-team-b']);
    expect((await signIn(new TestBrowser(), person)).status).to.equal(200);
    const user = await userOf(person.email);
    expect(await rolesOf(user.id)).to.deep.equal({ [teamA.id]: 'user', [teamB.id]: 'user' });
    await admin.leaveGroup(person.id, 'ml-team-a');
    expect((await signIn(new TestBrowser(), person)).status).to.equal(200);
    expect(await rolesOf(user.id)).to.deep.equal({ [teamB.id]: 'user' });
    await admin.leaveGroup(person.id, 'ml-team-b');
    const refused = await signIn(new TestBrowser(), person);
    expect(refused.status).to.equal(403);
    expect(refused.text).to.contain('None of your groups at Keycloak gives access');
    expect(await rolesOf(user.id)).to.deep.equal({});
  });

  /** The refresh token of the user's dashboard session, as the dashboard keeps it (sealed). */
  async function sessionRefreshToken(userId: number): Promise<string> {
    const row = await t.platform.db('dashboard_sessions').where({ user_id: userId }).orderBy('created_at', 'desc').first();
    return t.platform.box.openJson(row.tokens_sealed).refresh!;
  }
  const refresh = (token: string) => t.auth.post('/api/auth/token/refresh', { json: { refresh: token } });

  it('recomputes the roles from the provider at each refresh, and ends the session once no group grants any', async () => {
    const person = await admin.createUser(['ml-team-a', 'ml-team-b']);
    expect((await signIn(new TestBrowser(), person)).status).to.equal(200);
    const user = await userOf(person.email);
    await admin.leaveGroup(person.id, 'ml-team-b');
    const renewed = await refresh(await sessionRefreshToken(user.id));
    expect(renewed.status, renewed.text).to.equal(200);
    expect(await rolesOf(user.id)).to.deep.equal({ [teamA.id]: 'user' });
    expect((await roleChangesOf(user.id)).slice(-1)).to.deep.equal([`ssoRemoveRole workspace/${teamB.id}`]);
    await admin.leaveGroup(person.id, 'ml-team-a');
    const refused = await refresh(renewed.body.refresh);
    expect(refused.status).to.equal(401);
    expect(refused.body.message).to.contain('any longer');
    expect(await rolesOf(user.id)).to.deep.equal({});
  });

  it('refuses to refresh the session of a person the provider no longer knows', async () => {
    const person = await admin.createUser(['ml-team-a']);
    expect((await signIn(new TestBrowser(), person)).status).to.equal(200);
    const user = await userOf(person.email);
    // One workspace: the dashboard moved the session into it, in a family of its own that still follows Keycloak.
    const renewed = await refresh(await sessionRefreshToken(user.id));
    expect(renewed.status, renewed.text).to.equal(200);
    await admin.deleteUser(person.id);
    const refused = await refresh(renewed.body.refresh);
    expect(refused.status).to.equal(401);
    expect(refused.body.message).to.contain('no longer accepts this sign-in');
    const again = await refresh(renewed.body.refresh);
    expect(again.status).to.equal(401);
  });

  it('signs out at Keycloak too, with the ID token as the hint, so that the next sign-in asks for the password again', async () => {
    const person = await admin.createUser(['ml-team-a']);
    const browser = new TestBrowser();
    expect((await signIn(browser, person)).status).to.equal(200);
    const dashboardHost = new URL(t.auth.baseUrl).host;
    /** Whether Keycloak still knows this browser: a sign-in started afresh at the dashboard passes Keycloak without its form. */
    const keycloakSessionLives = async () => {
      const fresh = browser.without(dashboardHost);
      const atKeycloak = await fresh.request((await fresh.request(`${t.auth.baseUrl}/dashboard/sso/keycloak`)).location!);
      if (atKeycloak.status === 200) expect(atKeycloak.text).to.contain('kc-form-login');
      return atKeycloak.status === 302;
    };
    expect(await keycloakSessionLives()).to.equal(true);
    const home = await browser.request(`${t.auth.baseUrl}/dashboard`);
    const csrf = /name="_csrf" value="([^"]+)"/.exec(home.text)![1]!;
    const out = await browser.request(`${t.auth.baseUrl}/dashboard/sign-out`, { form: { _csrf: csrf } });
    expect(out.status).to.equal(200);
    const logout = new URL(/content="0;url=([^"]+)"/.exec(out.text)![1]!.replaceAll('&amp;', '&'));
    expect(logout.href.startsWith(`${keycloakEnv().issuer}/protocol/openid-connect/logout`)).to.equal(true);
    expect(logout.searchParams.get('id_token_hint')).to.match(/^eyJ/);
    expect(logout.searchParams.get('post_logout_redirect_uri')).to.equal(`${publicDashboard}/sign-in`);
    const atKeycloak = await browser.request(logout.href);
    expect(atKeycloak.status).to.equal(302);
    expect(atKeycloak.location).to.equal(`${publicDashboard}/sign-in`);
    expect(await keycloakSessionLives()).to.equal(false);
    expect(browser.cookie(dashboardHost, 'dy_session')).to.equal(undefined);
  });

  it('hands a native app its tokens at its loopback redirect, once, for the PKCE verifier of its challenge', async () => {
    const person = await admin.createUser(['ml-team-a']);
    const browser = new TestBrowser();
    const redirectUri = 'http://127.0.0.1:45678/callback';
    const appSignIn = async () => {
      const verifier = crypto.randomBytes(32).toString('base64url');
      const challenge = crypto.createHash('sha256').update(verifier).digest('base64url');
      const query = new URLSearchParams({ redirect_uri: redirectUri, code_challenge: challenge, code_challenge_method: 'S256', state: 'the-app-state' });
      const start = await browser.request(`${t.auth.baseUrl}/dashboard/sso/keycloak?${query}`);
      expect(start.status, start.text).to.equal(303);
      const back = await browser.request(local(await passKeycloak(browser, start.location!, person.username, person.password)));
      expect(back.status, back.text).to.equal(303);
      const atApp = new URL(back.location!);
      expect(`${atApp.origin}${atApp.pathname}`).to.equal(redirectUri);
      expect(atApp.searchParams.get('state')).to.equal('the-app-state');
      return { code: atApp.searchParams.get('code')!, verifier };
    };
    const redeem = (code: string, verifier: string, redirect = redirectUri, workspace?: string) =>
      t.auth.post('/api/auth/sso/token', { json: { code, code_verifier: verifier, redirect_uri: redirect, ...(workspace ? { workspace } : {}) } });

    const first = await appSignIn();
    const tokens = await redeem(first.code, first.verifier, redirectUri, teamA.name);
    expect(tokens.status, tokens.text).to.equal(200);
    const verify = await t.auth.get('/api/auth/token/verify', { token: tokens.body.access });
    expect(verify.body.token_data).to.include({ user_id: (await userOf(person.email)).id, workspace: teamA.name });
    expect((await redeem(first.code, first.verifier)).status).to.equal(400);
    expect(browser.cookie(new URL(t.auth.baseUrl).host, 'dy_session')).to.equal(undefined);
    // The app's sign-in follows Keycloak at refresh like the dashboard's.
    expect((await refresh(tokens.body.refresh)).status).to.equal(200);

    const second = await appSignIn();
    const stolen = await redeem(second.code, crypto.randomBytes(32).toString('base64url'));
    expect(stolen.status).to.equal(400);
    expect(stolen.body.message).to.contain('does not match');
    expect((await redeem(second.code, second.verifier)).status).to.equal(400);

    const third = await appSignIn();
    expect((await redeem(third.code, third.verifier, 'http://127.0.0.1:45679/callback')).status).to.equal(400);
    const foreign = await appSignIn();
    expect((await redeem(foreign.code, foreign.verifier, redirectUri, teamB.name)).status).to.equal(403);
  });

  it('refuses a native app a redirect off the loopback and a challenge other than S256', async () => {
    const challenge = crypto.createHash('sha256').update('v'.repeat(43)).digest('base64url');
    const cases: Array<Record<string, string>> = [
      { redirect_uri: 'https://evil.example/callback', code_challenge: challenge, code_challenge_method: 'S256', state: 'the-app-state' },
      { redirect_uri: 'http://192.168.1.5:8000/callback', code_challenge: challenge, code_challenge_method: 'S256', state: 'the-app-state' },
      { redirect_uri: 'http://127.0.0.1:8000/callback', code_challenge: 'v'.repeat(43), code_challenge_method: 'plain', state: 'the-app-state' },
      { redirect_uri: 'http://127.0.0.1:8000/callback', code_challenge: challenge, code_challenge_method: 'S256' },
    ];
    for (const query of cases) {
      const page = await new TestBrowser().request(`${t.auth.baseUrl}/dashboard/sso/keycloak?${new URLSearchParams(query)}`);
      expect(page.status, JSON.stringify(query)).to.equal(400);
    }
  });

  it('logs the Python CLI in through Keycloak (didyma login --sso) in a workspace, and whoami shows it', async () => {
    const person = await admin.createUser(['ml-team-a']);
    const cli = pythonCli(path.join(os.tmpdir(), `didyma-cli-${crypto.randomBytes(5).toString('hex')}.json`));
    const login = cli.run(['--auth-url', t.auth.baseUrl, 'login', '--sso', 'keycloak', '--no-browser', '--workspace', teamA.name, '--sso-timeout', '60']);
    const url = await login.line(/Sign in in your browser: (\S+)/);
    const browser = new TestBrowser();
    const start = await browser.request(url);
    expect(start.status, start.text).to.equal(303);
    const back = await browser.request(local(await passKeycloak(browser, start.location!, person.username, person.password)));
    expect(back.status, back.text).to.equal(303);
    expect(back.location).to.match(/^http:\/\/127\.0\.0\.1:\d+\/callback\?/);
    const atCli = await browser.request(back.location!);
    expect(atCli.status).to.equal(200);
    expect(atCli.text).to.contain('signed in');
    const done = await login.exit;
    expect(done.code, done.output).to.equal(0);
    const whoami = await cli.run(['--auth-url', t.auth.baseUrl, 'whoami']).exit;
    expect(whoami.code, whoami.output).to.equal(0);
    expect(whoami.output).to.contain('signed in through keycloak');
    expect(whoami.output).to.contain(teamA.name);
  });

  it('signs the Python SDK in through Keycloak (Didyma.login_sso) in a workspace', async () => {
    const person = await admin.createUser(['ml-team-a']);
    const script = [
      'import sys',
      'from didyma import Didyma',
      'client = Didyma.login_sso("keycloak", sys.argv[2], open_browser=False, timeout=60, auth_url=sys.argv[1])',
      'claims = client.auth.verify()',
      'print("claims:", claims.workspace, claims.user_id)',
    ].join('\n');
    const sdk = pythonCli(path.join(os.tmpdir(), 'unused.json')).run([t.auth.baseUrl, teamA.name], script);
    const browser = new TestBrowser();
    const start = await browser.request(await sdk.line(/Sign in in your browser: (\S+)/));
    const back = await browser.request(local(await passKeycloak(browser, start.location!, person.username, person.password)));
    expect((await browser.request(back.location!)).status).to.equal(200);
    const done = await sdk.exit;
    expect(done.code, done.output).to.equal(0);
    expect(done.output).to.contain(`claims: ${teamA.name} ${(await userOf(person.email)).id}`);
  });

  it('refuses a state used once already', async () => {
    const person = await admin.createUser(['ml-team-a']);
    const browser = new TestBrowser();
    const callback = local(await throughKeycloak(browser, person));
    const binding = browser.cookie(new URL(t.auth.baseUrl).host, 'dy_sso')!;
    expect((await browser.request(callback)).status).to.equal(200);
    browser.setCookie(new URL(t.auth.baseUrl).host, 'dy_sso', binding);
    const replayed = await browser.request(callback);
    expect(replayed.status).to.equal(400);
    expect(replayed.text).to.contain('expired or was already completed');
  });

  it('refuses a sign-in brought back to another browser than the one that started it', async () => {
    const person = await admin.createUser(['ml-team-a']);
    const callback = local(await throughKeycloak(new TestBrowser(), person));
    const elsewhere = await new TestBrowser().request(callback);
    expect(elsewhere.status).to.equal(400);
    expect(elsewhere.text).to.contain('started in another browser');
  });

  it('refuses an e-mail outside the allowed domains, and a person no group maps', async () => {
    const outsider = await admin.createUser(['ml-team-a'], 'elsewhere.test');
    const refused = await signIn(new TestBrowser(), outsider);
    expect(refused.status).to.equal(403);
    expect(refused.text).to.contain('is not allowed to sign in');
    expect(await userOf(outsider.email)).to.equal(undefined);

    const ungrouped = await admin.createUser([]);
    const unmapped = await signIn(new TestBrowser(), ungrouped);
    expect(unmapped.status).to.equal(403);
    expect(await userOf(ungrouped.email)).to.equal(undefined);
  });

  it('signs in only people who have an account when the connection creates none, linking them by their verified e-mail', async () => {
    const person = await admin.createUser(['ml-team-a']);
    const refused = await signIn(new TestBrowser(), person, 'invited-only');
    expect(refused.status).to.equal(403);
    expect(refused.text).to.contain('does not create accounts');
    const invited = await createUser(t.platform.db, { email: person.email, password: 'Correct-Horse-Battery-9' });
    expect((await signIn(new TestBrowser(), person, 'invited-only')).status).to.equal(200);
    expect(await rolesOf(invited.id)).to.deep.equal({ [teamA.id]: 'user' });
    expect(await t.platform.db('sso_identities').where({ user_id: invited.id, connection_id: 'invited-only' }).first()).to.not.equal(undefined);
  });

  it('refuses an e-mail the provider has not verified', async () => {
    const person = await admin.createUser(['ml-team-a'], 'example.test', false);
    const refused = await signIn(new TestBrowser(), person);
    expect(refused.status).to.equal(403);
    expect(refused.text).to.contain('has not verified the e-mail address');
    expect(await userOf(person.email)).to.equal(undefined);
  });

  it('comes back to a page of the dashboard only, whatever `next` says', async () => {
    const person = await admin.createUser(['ml-team-a']);
    const inside = await signIn(new TestBrowser(), person, 'keycloak', '/dashboard/tokens');
    expect(inside.text).to.contain('content="0;url=/dashboard/tokens"');
    for (const next of ['https://evil.example/dashboard', '//evil.example/dashboard', '/dashboard\\@evil.example']) {
      const outside = await signIn(new TestBrowser(), person, 'keycloak', next);
      expect(outside.status, next).to.equal(200);
      expect(outside.text, next).to.contain('content="0;url=/dashboard"');
    }
  });

  it('refuses the provider\'s error, an unknown connection and a callback without state', async () => {
    const browser = new TestBrowser();
    const start = await browser.request(`${t.auth.baseUrl}/dashboard/sso/keycloak`);
    const state = new URL(start.location!).searchParams.get('state')!;
    const denied = await browser.request(`${t.auth.baseUrl}/dashboard/sso/keycloak/callback?error=access_denied&state=${state}&iss=${encodeURIComponent(keycloakEnv().issuer)}`);
    expect(denied.status).to.equal(401);
    expect(denied.text).to.contain('refused the sign-in: access_denied');

    const unknown = await browser.request(`${t.auth.baseUrl}/dashboard/sso/nowhere`);
    expect(unknown.status).to.equal(404);
    const stateless = await browser.request(`${t.auth.baseUrl}/dashboard/sso/keycloak/callback?code=abc`);
    expect(stateless.status).to.equal(400);
  });

  it('shows a button per connection on the sign-in page', async () => {
    const page = await new TestBrowser().request(`${t.auth.baseUrl}/dashboard/sign-in?next=%2Fdashboard%2Ftokens`);
    expect(page.text).to.contain('href="/dashboard/sso/keycloak?next=%2Fdashboard%2Ftokens"');
    expect(page.text).to.contain('Sign in with Keycloak');
  });
});
