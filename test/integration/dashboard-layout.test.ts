import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { login, makeUser, makeWorkspace, startTestPlatform, unique, type TestPlatform, type TestUser } from '../support/platform.js';
import { Browsers, overflowOf, screenshot, signIn } from '../support/browser.js';

// The dashboard at a laptop's width and at a narrow window's: tables keep to
// their frame, times and words stay whole, and the sections fold behind a
// Menu button that opens and closes them.

const WIDTHS = [1280, 800];

/** Runs in the page: how many line boxes an element's text takes. */
const lineCount = (element: unknown) => (element as { getClientRects(): ArrayLike<unknown> }).getClientRects().length;

describe('dashboard layout at 1280 and 800 px', function () {
  this.timeout(180_000);
  let browsers: Browsers;
  let t: TestPlatform;
  let dashboard: string;
  let supervisor: TestUser;
  let ws: { id: number; name: string };

  before(async () => {
    browsers = new Browsers();
    t = await startTestPlatform();
    dashboard = `${t.auth.baseUrl}/dashboard`;
    supervisor = await makeUser(t.platform);
    ws = await makeWorkspace(t.platform, [[supervisor, 'supervisor']]);
    // Audit records with every column filled: invitations sent, and a refused request.
    const token = (await login(t.auth, supervisor, ws.name)).access;
    for (let i = 0; i < 3; i++) {
      expect((await t.auth.post('/api/auth/invitation', { token, json: { email: `${unique('colleague')}@example.test`, role: 'user' } })).status).to.equal(201);
    }
    await t.platform.audit.drain();
  });
  after(async () => {
    await browsers?.closeAll();
    await t?.close();
  });

  async function signedIn(width: number): Promise<Page> {
    const { page } = await browsers.launch();
    await page.setViewportSize({ width, height: 800 });
    await signIn(page, dashboard, supervisor, ws.name);
    return page;
  }

  for (const width of WIDTHS) {
    it(`keeps the audit trail within a ${width} px window, each time and action on one line`, async () => {
      const page = await signedIn(width);
      await page.goto(`${dashboard}/audit`);
      const table = page.getByRole('table', { name: 'Audit records' });
      expect(await table.getByRole('row').count()).to.be.greaterThan(3);
      expect(await overflowOf(page)).to.deep.equal({ page: 0, tables: [0] });
      for (const time of await table.locator('td time').all()) expect(await time.evaluate(lineCount)).to.equal(1);
      const action = table.locator('td code', { hasText: 'createInvitation' }).first();
      expect(await action.evaluate(lineCount)).to.equal(1);
      if (width === 800) await screenshot(page, 'audit-narrow');
    });

    it(`lays out the other sections without widening a ${width} px window`, async () => {
      const page = await signedIn(width);
      for (const section of ['', '/tokens', '/members', '/webhooks', '/metrics', '/settings']) {
        await page.goto(`${dashboard}${section}`);
        expect((await overflowOf(page)).page, section || 'overview').to.equal(0);
      }
    });
  }

  it('folds the sections behind the Menu button at 800 px, and shows them beside the page at 1280 px', async () => {
    const page = await signedIn(800);
    const menu = page.getByRole('button', { name: 'Menu' });
    const sections = page.locator('nav#sections');
    expect(await menu.getAttribute('aria-expanded')).to.equal('false');
    expect(await sections.isVisible()).to.equal(false);

    await menu.click();
    expect(await menu.getAttribute('aria-expanded')).to.equal('true');
    expect(await sections.isVisible()).to.equal(true);
    await screenshot(page, 'menu-narrow', false);
    await sections.getByRole('link', { name: 'Audit trail' }).click();
    await page.waitForURL(/\/dashboard\/audit$/);
    expect(await sections.isVisible()).to.equal(false);
    await menu.click();
    await menu.click();
    expect(await menu.getAttribute('aria-expanded')).to.equal('false');
    expect(await sections.isVisible()).to.equal(false);

    await page.setViewportSize({ width: 1280, height: 800 });
    expect(await menu.isVisible()).to.equal(false);
    expect(await sections.isVisible()).to.equal(true);
  });

  it('leaves the sections open at 800 px when the script does not run', async () => {
    const page = await signedIn(800);
    await page.route('**/static/dashboard.js', (route) => route.abort());
    await page.goto(`${dashboard}/audit`);
    expect(await page.locator('nav#sections').isVisible()).to.equal(true);
    expect(await page.getByRole('button', { name: 'Menu' }).isVisible()).to.equal(false);
    expect((await overflowOf(page)).page).to.equal(0);
  });
});
