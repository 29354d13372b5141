import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { SignJWT, exportJWK, generateKeyPair, type JWTPayload } from 'jose';
import { NotAuthenticatedError } from '../../kernel/errors/errors.js';
import { OpenIdProvider, type PendingChecks } from './provider.js';

// An OpenID Provider of the test's own, whose token endpoint answers with the
// ID token each case signs: what openid-client must refuse, it refuses here.

type KeyPair = Awaited<ReturnType<typeof generateKeyPair>>;

describe('OpenID Provider client', () => {
  let server: http.Server;
  let issuer: string;
  let keys: KeyPair;
  let stranger: KeyPair;
  let idToken = '';
  /** The token endpoint's error answer (RFC 8628's, say) in place of the tokens, while set. */
  let tokenError: string | undefined;
  const requests: Array<{ path: string; body: URLSearchParams }> = [];

  before(async () => {
    keys = await generateKeyPair('RS256');
    stranger = await generateKeyPair('RS256');
    const jwk = { ...(await exportJWK(keys.publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' };
    server = http.createServer((req, res) => {
      const send = (body: unknown) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      if (req.url === '/.well-known/openid-configuration') {
        return send({
          issuer,
          authorization_endpoint: `${issuer}/auth`,
          token_endpoint: `${issuer}/token`,
          device_authorization_endpoint: `${issuer}/device`,
          jwks_uri: `${issuer}/jwks`,
          response_types_supported: ['code'],
          subject_types_supported: ['public'],
          id_token_signing_alg_values_supported: ['RS256'],
        });
      }
      if (req.url === '/jwks') return send({ keys: [jwk] });
      if (req.url !== '/token' && req.url !== '/device') return res.writeHead(404).end();
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk));
      req.on('end', () => {
        requests.push({ path: req.url!, body: new URLSearchParams(body) });
        if (req.url === '/device') return send({ device_code: 'the-device-code', user_code: 'WDJB-MJHT', verification_uri: `${issuer}/verify`, expires_in: 900 });
        if (tokenError) return res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ error: tokenError }));
        send({ access_token: 'at', token_type: 'Bearer', expires_in: 60, id_token: idToken });
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise((resolve) => server.close(resolve)));

  const provider = () => new OpenIdProvider({ issuer, clientId: 'didyma', clientSecret: 'client-secret', scopes: ['openid', 'email'], timeoutSeconds: 5 });

  async function signed(checks: PendingChecks, claims: JWTPayload = {}, key: KeyPair = keys, alg = 'RS256'): Promise<string> {
    const now = Math.floor(Date.now() / 1000);
    return new SignJWT({ iss: issuer, aud: 'didyma', sub: 'person-1', nonce: checks.nonce, iat: now, exp: now + 300, ...claims })
      .setProtectedHeader({ alg, kid: 'k1' })
      .sign(key.privateKey);
  }

  async function redeemWith(token: (checks: PendingChecks) => Promise<string>, state?: string) {
    const client = provider();
    const { url, checks } = await client.authorizationRequest('http://127.0.0.1:9/dashboard/sso/corp/callback');
    idToken = await token(checks);
    const callback = new URL(`http://127.0.0.1:9/dashboard/sso/corp/callback?code=the-code&state=${state ?? checks.state}`);
    return { url: new URL(url), checks, result: client.redeem(callback, checks) };
  }

  it('asks for the code with PKCE, state and nonce, and gives the verified claims back', async () => {
    const { url, checks, result } = await redeemWith((c) => signed(c, { email: 'ann@example.test' }));
    expect(url.searchParams.get('code_challenge_method')).to.equal('S256');
    expect(url.searchParams.get('code_challenge')).to.match(/^[A-Za-z0-9_-]{43}$/);
    expect(url.searchParams.get('state')).to.equal(checks.state);
    expect(url.searchParams.get('nonce')).to.equal(checks.nonce);
    expect(url.searchParams.get('scope')).to.equal('openid email');
    const { claims } = await result;
    expect(claims).to.include({ sub: 'person-1', email: 'ann@example.test' });
  });

  const now = () => Math.floor(Date.now() / 1000);
  const refusals: Array<[string, (checks: PendingChecks) => Promise<string>, RegExp]> = [
    ['another nonce', (c) => signed(c, { nonce: 'not-the-nonce' }), /"nonce" claim value/],
    ['no nonce', (c) => signed(c, { nonce: undefined }), /"nonce" \(nonce\) claim missing/],
    ['another issuer', (c) => signed(c, { iss: 'https://elsewhere.example.test' }), /"iss" \(issuer\)/],
    ['another audience', (c) => signed(c, { aud: 'someone-else' }), /"aud" \(audience\)/],
    ['an expired token', (c) => signed(c, { iat: now() - 7200, exp: now() - 3600 }), /"exp" \(expiration time\)/],
    ['a signature by another key', (c) => signed(c, {}, stranger), /signature verification failed/],
    ['alg none', async (c) => unsigned({ iss: issuer, aud: 'didyma', sub: 'p', nonce: c.nonce, iat: now(), exp: now() + 300 }), /"alg" header/],
    ['HS256 keyed with the client secret', (c) => hmac(c, issuer), /"alg" header/],
  ];
  for (const [what, token, reason] of refusals) {
    it(`refuses an ID token with ${what}`, async () => {
      const { result } = await redeemWith(token);
      const error = await result.then(() => null, (e: unknown) => e);
      expect(error, what).to.be.instanceOf(NotAuthenticatedError);
      expect(String(error)).to.match(reason);
    });
  }

  describe('device authorization (RFC 8628)', () => {
    beforeEach(() => {
      requests.length = 0;
      tokenError = undefined;
    });

    it('asks with PKCE, then makes one token request per poll with the device code and verifier', async () => {
      const client = provider();
      const device = await client.deviceAuthorization();
      expect(device).to.include({ deviceCode: 'the-device-code', userCode: 'WDJB-MJHT', interval: 5, expiresIn: 900 });
      const asked = requests.find((r) => r.path === '/device')!.body;
      expect(asked.get('scope')).to.equal('openid email');
      expect(asked.get('code_challenge_method')).to.equal('S256');
      for (const error of ['authorization_pending', 'slow_down', 'expired_token', 'access_denied'] as const) {
        tokenError = error;
        expect(await client.pollDevice(device)).to.deep.equal({ outcome: error });
      }
      tokenError = undefined;
      idToken = await signed({ state: '', nonce: '', codeVerifier: '' }, { nonce: undefined, email: 'ann@example.test' });
      const poll = await client.pollDevice(device);
      expect(poll.outcome === 'signed_in' && poll.signIn.claims).to.include({ sub: 'person-1', email: 'ann@example.test' });
      const polls = requests.filter((r) => r.path === '/token').map((r) => r.body);
      expect(polls).to.have.length(5);
      expect(polls[0]!.get('grant_type')).to.equal('urn:ietf:params:oauth:grant-type:device_code');
      expect(polls[0]!.get('device_code')).to.equal('the-device-code');
      expect(polls[0]!.get('code_verifier')).to.equal(device.codeVerifier);
    });

    it('refuses any other error of the provider as a 401', async () => {
      const client = provider();
      const device = await client.deviceAuthorization();
      tokenError = 'invalid_grant';
      const error = await client.pollDevice(device).then(() => null, (e: unknown) => e);
      expect(error).to.be.instanceOf(NotAuthenticatedError);
      expect(String(error)).to.contain('invalid_grant');
    });

    const deviceRefusals = refusals.filter(([what]) => !what.includes('nonce'));
    for (const [what, token, reason] of deviceRefusals) {
      it(`refuses an ID token with ${what}`, async () => {
        const client = provider();
        const device = await client.deviceAuthorization();
        idToken = await token({ state: '', nonce: '', codeVerifier: '' });
        const error = await client.pollDevice(device).then(() => null, (e: unknown) => e);
        expect(error, what).to.be.instanceOf(NotAuthenticatedError);
        expect(String(error)).to.match(reason);
      });
    }
  });

  it('refuses a response whose state is not the one sent', async () => {
    const { result } = await redeemWith((c) => signed(c), 'forged-state');
    const error = await result.then(() => null, (e: unknown) => e);
    expect(error).to.be.instanceOf(NotAuthenticatedError);
    expect(String(error)).to.match(/unexpected "state"/);
  });
});

function unsigned(claims: JWTPayload): string {
  const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
  return `${part({ alg: 'none', typ: 'JWT' })}.${part(claims)}.`;
}

function hmac(checks: PendingChecks, issuer: string): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ iss: issuer, aud: 'didyma', sub: 'p', nonce: checks.nonce, iat: now, exp: now + 300 })
    .setProtectedHeader({ alg: 'HS256' })
    .sign(new TextEncoder().encode('client-secret'));
}
