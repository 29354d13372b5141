import { expect } from 'chai';
import { startTestPlatform, type TestPlatform } from '../support/platform.js';
import { tenant } from '../support/fixtures.js';
import { Browsers } from '../support/browser.js';

// The API pages in Chromium: Swagger UI runs under the page's own strict
// Content-Security-Policy (no violation reported) and "Try it out" calls the
// same server with the bearer token typed in "Authorize".

describe('API pages in a browser: /docs', function () {
  this.timeout(120_000);
  let browsers: Browsers;
  let t: TestPlatform;

  before(async () => {
    browsers = new Browsers();
    t = await startTestPlatform();
  });
  after(async () => {
    await browsers?.closeAll();
    await t?.close();
  });

  for (const name of ['auth', 'private', 'public'] as const) {
    it(`draws the ${name} server's operations without a Content-Security-Policy violation`, async () => {
      const { page } = await browsers.launch();
      const problems: string[] = [];
      page.on('console', (message) => {
        if (message.type() === 'error' || /Content.Security.Policy/i.test(message.text())) problems.push(message.text());
      });
      page.on('pageerror', (error) => problems.push(error.message));
      await page.goto(`${t[name].baseUrl}/docs`);
      await page.locator('.opblock').first().waitFor();
      expect(await page.locator('.opblock').count()).to.be.greaterThan(3);
      expect(await page.locator('.info .title').first().innerText()).to.include(`didyma ${name} server`);
      expect(problems).to.deep.equal([]);
    });
  }

  it('tries an operation with the reader’s bearer token, on the same server', async () => {
    const who = await tenant(t);
    const { page } = await browsers.launch();
    const calls: Array<{ url: string; authorization: string | undefined }> = [];
    page.on('request', (request) => {
      if (request.url().includes('/api/')) calls.push({ url: request.url(), authorization: request.headers().authorization });
    });
    await page.goto(`${t.public.baseUrl}/docs`);
    await page.getByRole('button', { name: 'Authorize' }).first().click();
    await page.locator('.auth-container input').first().fill(who.token);
    await page.locator('.auth-btn-wrapper button.authorize').first().click();
    await page.locator('.btn-done').first().click();

    const operation = page.locator('#operations-default-get_api_model, .opblock-get:has([data-path="/api/model"])').first();
    await operation.locator('.opblock-summary').first().click();
    await operation.getByRole('button', { name: 'Execute' }).click();
    const status = operation.locator('.live-responses-table tbody .response-col_status').first();
    await status.waitFor();
    expect(await status.innerText()).to.include('200');
    expect(calls.map((call) => new URL(call.url).origin)).to.deep.equal([t.public.baseUrl]);
    expect(calls[0]!.authorization).to.equal(`Bearer ${who.token}`);
  });
});
