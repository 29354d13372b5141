import { expect } from 'chai';
import { type Page } from 'playwright-core';
import { login, makeUser, makeWorkspace, startTestPlatform, unique, type TestPlatform, type TestUser } from '../support/platform.js';
import { demoDeployment, filesystemStorage, modelPayload, startDemoModelServer, upload } from '../support/fixtures.js';
import { startPrometheusStub } from '../support/prometheus-stub.js';
import { gradientPng } from '../support/png.js';
import { Browsers, screenshot, signIn as signInAt } from '../support/browser.js';

interface ImageElement {
  complete: boolean;
  naturalWidth: number;
  addEventListener(type: 'load', listener: () => void): void;
}

/** Runs in the page: the width of an image once it has loaded (0 when it could not be decoded). */
function naturalWidth(element: unknown): Promise<number> {
  const img = element as ImageElement;
  if (img.complete) return Promise.resolve(img.naturalWidth);
  return new Promise((resolve) => img.addEventListener('load', () => resolve(img.naturalWidth)));
}

describe('dashboard in a browser', function () {
  this.timeout(180_000);
  let browsers: Browsers;
  let t: TestPlatform;
  let prometheus: Awaited<ReturnType<typeof startPrometheusStub>>;
  let dashboard: string;
  let supervisor: TestUser;
  let ws: { id: number; name: string };

  before(async () => {
    browsers = new Browsers();
    prometheus = await startPrometheusStub();
    t = await startTestPlatform({ prometheusUrl: prometheus.url });
    dashboard = `${t.auth.baseUrl}/dashboard`;
    supervisor = await makeUser(t.platform);
    ws = await makeWorkspace(t.platform, [[supervisor, 'supervisor']]);
  });
  after(async () => {
    await browsers?.closeAll();
    await t?.close();
    await prometheus?.close();
  });

  const openBrowser = () => browsers.launch();
  const signIn = (page: Page, user: TestUser, workspace = '') => signInAt(page, dashboard, user, workspace);

  it('lets an invited user register through the form and sign in', async () => {
    const { page } = await openBrowser();
    const email = `${unique('invitee')}@example.test`;
    const token = (await login(t.auth, supervisor, ws.name)).access;
    const invitation = await t.auth.post('/api/auth/invitation', { token, json: { email, role: 'user' } });
    expect(invitation.status).to.equal(201);
    const invitationToken = new URL(invitation.body.invitation_url).searchParams.get('token')!;

    await page.goto(`${dashboard}/register?token=${encodeURIComponent(invitationToken)}`);
    expect(await page.locator('h1').textContent()).to.equal('Accept your invitation');
    expect(await page.locator('#invited-email').textContent()).to.equal(email);
    await page.getByLabel('Name', { exact: true }).fill('Ada');
    await page.getByLabel('Surname').fill('Lovelace');
    await page.getByLabel('Password', { exact: true }).fill('alllowercase123');
    await page.getByLabel('Repeat the password').fill('alllowercase123');
    await page.getByLabel('Preferred language').selectOption('fr');
    await page.getByLabel('I accept the terms of service').check();
    await page.getByLabel('I accept the privacy policy').check();
    await page.getByRole('button', { name: 'Create account' }).click();
    expect(await page.locator('#field-password-problem').textContent()).to.contain('at least three of');
    expect(await page.getByLabel('Name', { exact: true }).inputValue()).to.equal('Ada');
    await screenshot(page, 'register');

    const strong = 'Analytical-Engine-1843';
    await page.getByLabel('Password', { exact: true }).fill(strong);
    await page.getByLabel('Repeat the password').fill(strong);
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.waitForURL(/\/dashboard\/sign-in\?/);
    expect(await page.getByRole('status').textContent()).to.contain('Your account is ready');
    expect(await page.getByLabel('Workspace').inputValue()).to.equal(ws.name);
    await screenshot(page, 'sign-in');

    await page.getByLabel('E-mail').fill(email);
    await page.getByLabel('Password').fill(strong);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(/\/dashboard$/);
    expect(await page.locator('.lead').textContent()).to.contain(`You are signed in to ${ws.name} as user`);
    const user = await t.platform.db('users').where({ email }).first();
    expect(user).to.include({ name: 'Ada', surname: 'Lovelace', preferred_language: 'fr' });

    // The link is single-use: opened again, it says so.
    const reused = await page.goto(`${dashboard}/register?token=${encodeURIComponent(invitationToken)}`);
    expect(reused!.status()).to.equal(410);
    expect(await page.locator('h1').textContent()).to.equal('Invitation already used');
  });

  it('lets a supervisor create an API token that works as Bearer on the public API until it is revoked', async () => {
    const { page, context } = await openBrowser();
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: t.auth.baseUrl });
    await signIn(page, supervisor, ws.name);
    await screenshot(page, 'overview');
    await page.getByRole('navigation', { name: 'Dashboard sections' }).getByRole('link', { name: 'API tokens' }).click();
    await page.getByLabel('Name').fill('nightly-batch');
    await page.getByRole('button', { name: 'Create token' }).click();
    const key = await page.locator('#new-token-key').inputValue();
    expect(key).to.match(/^dy_/);
    await page.getByRole('button', { name: 'Copy' }).click();
    // The copy is asynchronous (Clipboard API promise): wait for the announcement.
    const status = page.locator('[data-copy-status="new-token-key"]');
    await status.filter({ hasText: 'Copied to the clipboard.' }).waitFor({ timeout: 10_000 });
    expect(await status.textContent()).to.equal('Copied to the clipboard.');
    expect(await page.evaluate('navigator.clipboard.readText()')).to.equal(key);
    await screenshot(page, 'api-tokens');

    expect((await t.public.get('/api/model', { token: key })).status).to.equal(200);
    await page.goto(`${dashboard}/tokens`);
    const row = page.getByRole('row', { name: /nightly-batch/ });
    expect(await row.getByRole('cell').nth(3).textContent()).to.match(/UTC$/); // last use recorded
    expect(await page.locator('body').textContent()).not.to.contain(key);

    await page.getByRole('button', { name: 'Revoke token nightly-batch' }).click();
    expect(await page.getByRole('status').textContent()).to.contain('was revoked');
    expect((await t.public.get('/api/model', { token: key })).status).to.equal(401);

    await page.getByRole('button', { name: 'Re-enable token nightly-batch' }).click();
    expect((await t.public.get('/api/model', { token: key })).status).to.equal(200);
    await page.getByRole('button', { name: 'Delete token nightly-batch' }).click();
    expect(await page.getByRole('status').textContent()).to.contain('was deleted');
    expect((await t.public.get('/api/model', { token: key })).status).to.equal(401);
  });

  it('lets a supervisor create an OAuth application whose credentials obtain a token from /o/token/', async () => {
    const { page } = await openBrowser();
    await signIn(page, supervisor, ws.name);
    await page.goto(`${dashboard}/applications`);
    await page.getByLabel('Name').fill('billing-service');
    await page.getByRole('button', { name: 'Create application' }).click();
    const clientId = await page.locator('#client-id').inputValue();
    const secret = await page.locator('#client-secret').inputValue();
    await screenshot(page, 'oauth-applications');

    const obtain = (clientSecret: string) => t.auth.post('/o/token/', { form: { grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret, workspace: ws.name } });
    const granted = await obtain(secret);
    expect(granted.status).to.equal(200);
    expect(granted.body.token_type).to.equal('Bearer');
    expect((await t.public.get('/api/model', { token: granted.body.access_token })).status).to.equal(200);

    await page.getByRole('button', { name: 'Rotate the secret of billing-service' }).click();
    const rotated = await page.locator('#client-secret').inputValue();
    expect(rotated).not.to.equal(secret);
    expect((await obtain(secret)).status).to.equal(401);
    expect((await obtain(rotated)).status).to.equal(200);
    await page.getByRole('button', { name: 'Delete application billing-service' }).click();
    expect((await obtain(rotated)).status).to.equal(401);
  });

  it('lets a supervisor invite by e-mail, revoke, and read the overviews and metric charts of the workspace', async () => {
    const api = (await login(t.auth, supervisor, ws.name)).access;
    const version = unique('v');
    const demo = await startDemoModelServer(version);
    try {
      await demoDeployment(t.private, api, demo.url, unique('iris-demo'));
      const storage = await filesystemStorage(t.private, api, unique('cards'));
      const card = await upload(t.private, api, storage, '# Iris');
      const model = modelPayload('iris-classifier', version, card.file_id, { explainer: modelPayload('iris-explainer', version, card.file_id, { need_context: true }) });
      expect((await t.private.post('/api/platform_model', { token: api, json: model })).status).to.equal(201);

      const { page } = await openBrowser();
      await signIn(page, supervisor, ws.name);
      await page.goto(`${dashboard}/members`);
      await page.getByLabel('E-mail').fill(`${unique('colleague')}@example.test`);
      await page.getByLabel('Role').selectOption('supervisor');
      await page.getByRole('button', { name: 'Send invitation' }).click();
      expect(await page.locator('#invitation-url').inputValue()).to.match(/\/register\?token=/);
      await page.getByLabel('E-mail').fill(`${unique('reviewer')}@example.test`);
      await page.getByRole('button', { name: 'Send invitation' }).click();
      await screenshot(page, 'members');
      const pending = page.getByRole('table', { name: 'Pending invitations' }).getByRole('row');
      expect(await pending.count()).to.equal(3);
      await page.getByRole('button', { name: /Revoke the invitation of reviewer-/ }).click();
      expect(await page.getByRole('status').textContent()).to.contain('revoked');
      expect(await pending.count()).to.equal(2);

      await page.goto(`${dashboard}/models`);
      expect(await page.getByRole('table', { name: 'Registered models' }).getByRole('row').count()).to.equal(3);
      await screenshot(page, 'models');
      await page.goto(`${dashboard}/deployments`);
      expect(await page.getByRole('cell', { name: demo.url }).count()).to.equal(2); // its registry and its server
      await page.goto(`${dashboard}/storage`);
      expect(await page.getByRole('cell', { name: storage }).count()).to.equal(1);

      // An alias set from the model's aliases, then its policy from the alias's page.
      await page.goto(`${dashboard}/aliases/iris-classifier`);
      await page.getByRole('textbox', { name: 'Alias' }).fill('production');
      await page.getByRole('textbox', { name: 'Version' }).fill(version);
      await page.getByRole('button', { name: 'Set the alias' }).click();
      expect(await page.getByRole('status').textContent()).to.contain('alias was set');
      await page.getByRole('textbox', { name: 'Weights' }).fill(`${version}=100`);
      await page.getByLabel('Sticky').selectOption('user');
      await page.getByRole('button', { name: 'Set the policy' }).click();
      expect(await page.getByRole('status').textContent()).to.contain('traffic policy was set');
      expect(await page.getByRole('table', { name: 'History of production' }).getByRole('row').count()).to.equal(3);
      await screenshot(page, 'alias');

      await page.goto(`${dashboard}/metrics?range=24h`);
      const charts = page.locator('figure.chart svg[role="img"]');
      expect(await charts.count()).to.be.greaterThan(3);
      expect(await page.locator('polyline.series').count()).to.be.greaterThan(3);
      expect(prometheus.queries.every((q) => q.includes(`workspace="${ws.name}"`))).to.equal(true);
      // docs/screenshots/metrics.png comes from real figures: test/integration/make-run-metrics.test.ts.

      // The invitations just sent and revoked are on the workspace's audit trail.
      await page.getByRole('link', { name: 'Audit trail' }).first().click();
      await t.platform.audit.drain();
      await page.getByLabel('Action').fill('createInvitation');
      await page.getByRole('button', { name: 'Filter' }).click();
      expect(await page.getByRole('table', { name: 'Audit records' }).getByRole('row').count()).to.be.greaterThan(1);
      await screenshot(page, 'audit');

      await page.goto(`${dashboard}/settings`);
      await page.getByLabel('Image file').setInputFiles({ name: 'logo.png', mimeType: 'image/png', buffer: gradientPng() });
      await page.getByRole('button', { name: 'Upload logo' }).click();
      expect(await page.getByRole('status').textContent()).to.contain('logo was saved');
      expect(await page.locator('img.logo-preview').evaluate(naturalWidth)).to.equal(64);
    } finally {
      await demo.close();
    }
  });

  it('shows a plain user no supervisor page and refuses them by URL', async () => {
    const user = await makeUser(t.platform);
    await t.platform.db('memberships').insert({ user_id: user.id, workspace_id: ws.id, role: 'user' });
    const { page } = await openBrowser();
    await signIn(page, user, ws.name);
    const navigation = page.getByRole('navigation', { name: 'Dashboard sections' });
    expect(await navigation.getByRole('list').first().getByRole('link').allTextContents()).to.deep.equal(['Overview', 'Sessions', 'Datasets', 'Alias comparison']);
    // The API pages a member may use: not the private server's, which is for supervisors.
    expect(await navigation.getByRole('list', { name: 'Try the API' }).getByRole('link').allTextContents()).to.deep.equal(['Public API', 'Auth API']);
    for (const section of ['tokens', 'applications', 'members', 'settings', 'models', 'deployments', 'storage', 'metrics', 'audit', 'workspaces']) {
      const response = await page.goto(`${dashboard}/${section}`);
      expect(response!.status(), section).to.equal(403);
    }
    expect(await page.locator('.lead').first().textContent()).to.equal('Only staff users can open this page.');
    await page.goto(`${dashboard}/tokens`);
    expect(await page.locator('.lead').first().textContent()).to.equal('Only supervisors of this workspace can open this page.');
  });

  it('lets staff create, disable, enable and delete (after confirming) a workspace', async () => {
    // Staff act as staff from inside a workspace of theirs, like every other signed-in user.
    const staff = await makeUser(t.platform, { staff: true });
    const home = await makeWorkspace(t.platform, [[staff, 'user']]);
    const name = unique('team');
    const { page } = await openBrowser();
    await signIn(page, staff, home.name);
    await page.getByRole('link', { name: 'All workspaces' }).first().click();
    await page.getByLabel('Name').fill(name);
    await page.getByRole('button', { name: 'Create workspace' }).click();
    expect(await page.getByRole('status').textContent()).to.contain('was created');
    await page.getByRole('button', { name: `Disable workspace ${name}` }).click();
    expect((await t.platform.db('workspaces').where({ name }).first()).disabled).to.equal(true);
    await page.getByRole('button', { name: `Enable workspace ${name}` }).click();
    expect((await t.platform.db('workspaces').where({ name }).first()).disabled).to.equal(false);
    await screenshot(page, 'workspaces', false);

    await page.getByRole('link', { name: `Delete workspace ${name}` }).click();
    await page.getByLabel(`Type ${name} to confirm`).fill('not-the-name');
    await page.getByRole('button', { name: 'Delete workspace' }).click();
    expect(await page.getByRole('alert').textContent()).to.contain('nothing was deleted');
    expect((await t.platform.db('workspaces').where({ name }).first()).deleted_at).to.equal(null);
    await page.getByLabel(`Type ${name} to confirm`).fill(name);
    await page.getByRole('button', { name: 'Delete workspace' }).click();
    expect(await page.getByRole('status').textContent()).to.contain('was deleted');
    expect((await t.platform.db('workspaces').where({ name }).first()).deleted_at).not.to.equal(null);
  });

  it('keeps the session cookie out of reach of scripts and refuses a form post without the page\'s CSRF token', async () => {
    const { page, context } = await openBrowser();
    await signIn(page, supervisor, ws.name);
    const cookies = await context.cookies(t.auth.baseUrl);
    const session = cookies.find((c) => c.name === 'dy_session')!;
    expect(session).to.include({ httpOnly: true, sameSite: 'Strict' });
    expect(await page.evaluate('document.cookie')).to.equal('');
    // Another site's form cannot carry the token (and SameSite=Strict keeps the cookie away from it anyway).
    const forged = await page.evaluate(async (url) => (await fetch(url, { method: 'POST', body: new URLSearchParams({ name: 'forged', expiration_date: '2999-01-01' }) })).status, `${dashboard}/tokens`);
    expect(forged).to.equal(403);
  });
});
