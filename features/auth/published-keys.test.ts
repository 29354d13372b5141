import { expect } from 'chai';
import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { SignJWT } from 'jose';
import { NotAuthenticatedError, UnavailableError } from '../../kernel/errors/errors.js';
import { generateSigningKeys, jwks, publishedKeys, type SigningKeys } from './keys.js';
import { TokenService, type Subject } from './tokens.js';

const SETTINGS = { issuer: 'didyma', audience: 'didyma-api', accessTtlSeconds: 60, refreshTtlSeconds: 3600, cacheSize: 0 };
const SUBJECT: Subject = { userId: 7, workspace: { id: 1, name: 'ws' }, permissions: ['user'] };

/** The auth server's JWKS endpoint as the other servers see it: what it publishes can change, and it counts its answers. */
class JwksEndpoint {
  published: object[] = [];
  fetches = 0;
  private server: http.Server | undefined;

  constructor(public port = 0) {}

  get url(): string {
    return `http://127.0.0.1:${this.port}/api/auth/jwks.json`;
  }

  async start(): Promise<this> {
    this.server = http.createServer((_req, res) => {
      this.fetches += 1;
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ keys: this.published }));
    });
    await new Promise<void>((resolve) => this.server!.listen(this.port, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
    return this;
  }

  async stop(): Promise<void> {
    await new Promise((resolve) => this.server?.close(resolve));
    this.server?.closeAllConnections();
  }
}

const publish = (...keys: SigningKeys[]) => keys.flatMap((k) => jwks(k).keys);
const refusal = (promise: Promise<unknown>) => promise.then(() => undefined, (error: unknown) => error);

describe('tokens verified with the auth server’s published keys (DIDYMA_JWT_JWKS_URL)', () => {
  let endpoint: JwksEndpoint;
  const signer = generateSigningKeys();
  const issuer = new TokenService(signer, SETTINGS);
  const verifier = (cooldownMs = 3_600_000) => new TokenService(publishedKeys(endpoint.url, { cooldownMs, timeoutMs: 2000 }), SETTINGS);

  beforeEach(async () => {
    endpoint = await new JwksEndpoint().start();
    endpoint.published = publish(signer);
  });
  afterEach(() => endpoint.stop());

  it('verifies the auth server’s tokens holding no key, fetching the keys once', async () => {
    const tokens = verifier();
    for (let i = 0; i < 3; i++) expect((await tokens.verifyAccess(await issuer.issueAccess(SUBJECT))).user_id).to.equal(7);
    expect(endpoint.fetches).to.equal(1);
    expect(await refusal(tokens.issueAccess(SUBJECT))).to.be.instanceOf(Error).with.property('message').that.matches(/holds no signing key/);
  });

  it('refuses a token of a key it does not know, fetching again at most once per cooldown, and takes the key once published', async () => {
    const rotated = generateSigningKeys();
    const token = await new TokenService(rotated, SETTINGS).issueAccess(SUBJECT);
    const [patient, eager] = [verifier(), verifier(0)];
    for (const tokens of [patient, eager]) await tokens.verifyAccess(await issuer.issueAccess(SUBJECT));
    expect(endpoint.fetches).to.equal(2);
    for (let i = 0; i < 3; i++) expect(await refusal(patient.verifyAccess(token))).to.be.instanceOf(NotAuthenticatedError);
    expect(endpoint.fetches, 'unknown kids within the cooldown fetch nothing').to.equal(2);

    endpoint.published = publish(signer, rotated);
    expect(await refusal(patient.verifyAccess(token)), 'still cooling down').to.be.instanceOf(NotAuthenticatedError);
    expect((await eager.verifyAccess(token)).user_id).to.equal(7);
    expect(endpoint.fetches, 'past its cooldown, the unknown kid fetched the keys again').to.equal(3);
  });

  it('refuses another algorithm, even with a key of that kind published under the kid the token names', async () => {
    const rsa = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
    endpoint.published = [...publish(signer), { ...rsa.publicKey.export({ format: 'jwk' }), kid: 'rsa', alg: 'RS256', use: 'sig' }];
    const forged = await new SignJWT({ token_type: 'access', user_id: 1, workspace: null, workspace_id: null, permissions: ['staff'] })
      .setProtectedHeader({ alg: 'RS256', kid: 'rsa' })
      .setIssuer('didyma')
      .setAudience('didyma-api')
      .setSubject('1')
      .setJti('j')
      .setIssuedAt()
      .setExpirationTime('1m')
      .sign(rsa.privateKey);
    expect(await refusal(verifier().verifyAccess(forged))).to.be.instanceOf(NotAuthenticatedError);
    const unsigned = `${Buffer.from(JSON.stringify({ alg: 'none', kid: signer.kid })).toString('base64url')}.${Buffer.from(JSON.stringify({ token_type: 'access', user_id: 1 })).toString('base64url')}.`;
    expect(await refusal(verifier().verifyAccess(unsigned))).to.be.instanceOf(NotAuthenticatedError);
  });

  it('answers 503, not 401, while the auth server is down, and verifies once it is up, without a restart', async () => {
    const token = await issuer.issueAccess(SUBJECT);
    await endpoint.stop();
    const tokens = verifier();
    const refused = await refusal(tokens.verifyAccess(token));
    expect(refused).to.be.instanceOf(UnavailableError);
    expect((refused as UnavailableError).status).to.equal(503);
    endpoint = await new JwksEndpoint(endpoint.port).start();
    endpoint.published = publish(signer);
    expect((await tokens.verifyAccess(token)).user_id).to.equal(7);
  });
});
