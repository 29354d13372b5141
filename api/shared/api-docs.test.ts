import http from 'node:http';
import zlib from 'node:zlib';
import { expect } from 'chai';
import { login, makeUser, makeWorkspace, startTestPlatform, type TestPlatform } from '../../test/support/platform.js';

/** The `src`/`href` of the page's scripts and stylesheets, as the browser will ask for them. */
function assetsOf(page: string): string[] {
  return [...page.matchAll(/<(?:script src|link rel="(?:stylesheet|icon)"(?: type="[^"]+")? href)="([^"]+)"/g)].map((match) => match[1]!);
}

/** A GET whose body is left as sent (fetch would decompress it). */
function rawGet(url: string, headers: Record<string, string>): Promise<{ headers: http.IncomingHttpHeaders; body: Buffer }> {
  return new Promise((resolve, reject) => {
    http.get(url, { headers }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve({ headers: response.headers, body: Buffer.concat(chunks) }));
      response.on('error', reject);
    }).on('error', reject);
  });
}

describe('API pages: /docs on every server', () => {
  let t: TestPlatform;
  before(async () => {
    t = await startTestPlatform();
  });
  after(() => t.close());

  for (const name of ['auth', 'private', 'public'] as const) {
    it(`serves the ${name} server's document in Swagger UI, its files from the package, under a strict policy`, async () => {
      const client = t[name];
      const page = await client.get('/docs');
      expect(page.status).to.equal(200);
      expect(page.headers.get('content-type')).to.equal('text/html; charset=utf-8');
      expect(page.text).to.include(`<title>didyma ${name} server</title>`);
      expect(page.text, 'no inline script').not.to.match(/<script>/);
      const csp = page.headers.get('content-security-policy') ?? '';
      expect(csp).to.include("script-src 'self'").and.include("style-src 'self'").and.include("connect-src 'self'").and.include("frame-ancestors 'none'");
      expect(csp).not.to.include('unsafe');

      const assets = assetsOf(page.text);
      expect(assets).to.deep.equal(['/docs/favicon-32x32.png', '/docs/swagger-ui.css', '/docs/swagger-ui-bundle.js', '/docs/boot.js']);
      const types = await Promise.all(assets.map(async (asset) => (await client.get(asset)).headers.get('content-type')));
      expect(types).to.deep.equal(['image/png', 'text/css; charset=utf-8', 'text/javascript; charset=utf-8', 'text/javascript; charset=utf-8']);
      const bundle = await client.get('/docs/swagger-ui-bundle.js');
      expect(bundle.status).to.equal(200);
      expect(bundle.text).to.include('SwaggerUIBundle');

      // The boot script loads the server's own document, which is what /openapi.json answers.
      const boot = await client.get('/docs/boot.js');
      const documentUrl = /url: '([^']+)'/.exec(boot.text)?.[1];
      expect(documentUrl).to.equal('/openapi.json');
      const doc = await client.get(documentUrl!);
      expect(doc.status).to.equal(200);
      expect(doc.body.info.title).to.equal(`didyma ${name} server`);
      expect(doc.body.paths, '/docs is not an operation of the document').not.to.have.property('/docs');
    });
  }

  it('sends its files compressed to a browser that takes gzip, as they are to one that does not', async () => {
    const plain = await rawGet(`${t.public.baseUrl}/docs/swagger-ui-bundle.js`, {});
    const zipped = await rawGet(`${t.public.baseUrl}/docs/swagger-ui-bundle.js`, { 'accept-encoding': 'br, gzip' });
    const refused = await rawGet(`${t.public.baseUrl}/docs/swagger-ui-bundle.js`, { 'accept-encoding': 'gzip;q=0' });
    expect(plain.headers['content-encoding']).to.equal(undefined);
    expect(refused.headers['content-encoding']).to.equal(undefined);
    expect(zipped.headers['content-encoding']).to.equal('gzip');
    expect(zipped.headers.vary).to.equal('Accept-Encoding');
    expect(zipped.body.length).to.be.lessThan(plain.body.length / 2);
    expect(zlib.gunzipSync(zipped.body).equals(plain.body)).to.equal(true);
  });

  it('answers /docs/ as /docs, and unknown files under /docs with 404', async () => {
    expect((await t.public.get('/docs/')).status).to.equal(200);
    expect((await t.public.get('/docs/index.html')).status).to.equal(404);
    expect((await t.public.get('/docs/../package.json')).status).to.equal(404);
  });

  it('keeps the JSON API free of the page’s policy and needs no credentials in the page', async () => {
    const user = await makeUser(t.platform);
    const ws = await makeWorkspace(t.platform, [[user, 'user']]);
    const tokens = await login(t.auth, user, ws.name);
    const models = await t.public.get('/api/model', { token: tokens.access });
    expect(models.status).to.equal(200);
    expect(models.headers.get('content-security-policy')).to.equal(null);
    const page = await t.public.get('/docs');
    expect(page.text).not.to.include(tokens.access);
    expect(page.text.toLowerCase()).not.to.match(/bearer [a-z0-9]/);
  });
});
