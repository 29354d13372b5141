import { expect } from 'chai';
import { generateSigningKeys, type SigningKeys } from './keys.js';
import { TokenService, type Subject } from './tokens.js';

describe('verified-token cache', () => {
  const subject: Subject = { userId: 7, workspace: { id: 1, name: 'ws' }, permissions: ['user'] };
  let keys: SigningKeys;
  let now: number;

  const service = (cacheSize: number) =>
    new TokenService(keys, { issuer: 'didyma', audience: 'didyma-api', accessTtlSeconds: 60, refreshTtlSeconds: 3600, cacheSize }, () => now);

  /** After this, only a token the cache still holds verifies: the new key did not sign it. */
  const rotateKey = () => {
    keys.publicKey = generateSigningKeys().publicKey;
  };

  const verifies = (tokens: TokenService, token: string) =>
    tokens.verifyAccess(token).then(
      () => true,
      () => false,
    );

  beforeEach(() => {
    keys = { ...generateSigningKeys() };
    now = Date.UTC(2026, 0, 1);
  });

  it('skips the signature check of a token it verified, and keeps only the most recently used', async () => {
    const tokens = service(2);
    const [a, b, c] = await Promise.all([1, 2, 3].map(() => tokens.issueAccess(subject)));
    for (const token of [a!, b!, a!, c!]) await tokens.verifyAccess(token);
    rotateKey();
    expect(await verifies(tokens, a!)).to.equal(true);
    expect(await verifies(tokens, c!)).to.equal(true);
    expect(await verifies(tokens, b!)).to.equal(false);
  });

  it('never serves a token past its expiry', async () => {
    const tokens = service(10);
    const token = await tokens.issueAccess(subject);
    await tokens.verifyAccess(token);
    now += 59_999;
    expect(await verifies(tokens, token)).to.equal(true);
    now += 1;
    const refused = await tokens.verifyAccess(token).catch((error: Error) => error);
    expect(refused).to.be.instanceOf(Error).with.property('message', 'Token has expired.');
  });

  it('checks every signature with a size of 0', async () => {
    const tokens = service(0);
    const token = await tokens.issueAccess(subject);
    await tokens.verifyAccess(token);
    rotateKey();
    expect(await verifies(tokens, token)).to.equal(false);
  });
});
