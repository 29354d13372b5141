import { expect } from 'chai';
import { apiPages } from './api-pages.js';
import { PASSWORD, makeUser, makeWorkspace, startTestPlatform, type TestPlatform } from '../../test/support/platform.js';
import { DashboardClient } from '../../test/support/dashboard-client.js';

const ports = { privatePort: 8081, publicPort: 8082 };

describe('dashboard links to the API pages', () => {
  it('links to each server at its configured URL, else on the dashboard’s host at its port', () => {
    const derived = apiPages({ ...ports, dashboardUrl: 'http://localhost:8080/dashboard', privateUrl: undefined, publicUrl: undefined });
    expect(derived.map((p) => [p.label, p.url])).to.deep.equal([
      ['Public API', 'http://localhost:8082/docs'],
      ['Private API', 'http://localhost:8081/docs'],
      ['Auth API', '/docs'],
    ]);
    const configured = apiPages({ ...ports, dashboardUrl: 'https://auth.example.test/dashboard', privateUrl: 'https://private.example.test/', publicUrl: 'https://api.example.test' });
    expect(configured.map((p) => p.url)).to.deep.equal(['https://api.example.test/docs', 'https://private.example.test/docs', '/docs']);
  });

  describe('in the navigation', () => {
    let t: TestPlatform;
    before(async () => {
      t = await startTestPlatform({ publicUrl: 'https://api.example.test', privateUrl: 'https://private.example.test' });
    });
    after(() => t.close());

    async function navOf(role: 'user' | 'supervisor'): Promise<string> {
      const user = await makeUser(t.platform);
      const ws = await makeWorkspace(t.platform, [[user, role]]);
      const client = new DashboardClient(t.auth.baseUrl);
      await client.signIn(user.email, PASSWORD, ws.name);
      const page = await client.get('/dashboard');
      return /<nav[\s\S]*<\/nav>/.exec(page.text)![0];
    }

    it('shows members the public and auth pages, supervisors the private one too', async () => {
      const member = await navOf('user');
      expect(member).to.contain('Try the API').and.contain('href="https://api.example.test/docs"').and.contain('href="/docs"');
      expect(member).not.to.contain('private.example.test');
      expect(await navOf('supervisor')).to.contain('href="https://private.example.test/docs"');
    });

    it('links to a page the auth server serves', async () => {
      const page = await t.auth.get('/docs');
      expect(page.status).to.equal(200);
      expect(page.text).to.contain('<title>didyma auth server</title>');
    });
  });
});
