import { expect } from 'chai';
import type { Db } from '../../../infra/db/database.js';
import type { DeviceAuthorization, DevicePoll } from '../../../infra/oidc/provider.js';
import { AppError, BadGatewayError, NotAuthenticatedError } from '../../../kernel/errors/errors.js';
import { sharedDatabase } from '../../../test/support/database.js';
import { testBox } from '../../../test/support/platform.js';
import { DeviceSignIns } from './device.js';
import { ssoStore } from './store.js';
import { SignInStarts } from './starts.js';
import { rateLimitStore } from '../../auth/rate-limit.store.js';

// The device sign-ins' handles on the database: the provider's side is a
// function each test scripts (test/integration/sso-device.test.ts runs it
// against Keycloak).

describe('device sign-ins (RFC 8628): handles and polls', () => {
  let db: Db;
  let clock = Date.parse('2026-01-01T00:00:00Z');
  const starts = () => new SignInStarts(db, rateLimitStore, 1000, () => clock);
  const devices = () => new DeviceSignIns({ db, box: testBox, sso: ssoStore, starts: starts(), now: () => clock });
  /** A start counted for a source of its own. */
  const counted = () => starts().count(`203.0.113.${Math.floor(Math.random() * 250) + 1}`);
  const authorization = (overrides: Partial<DeviceAuthorization> = {}): DeviceAuthorization => ({
    deviceCode: 'the-device-code',
    codeVerifier: 'the-verifier',
    userCode: 'WDJB-MJHT',
    verificationUri: 'https://idp.example.test/device',
    verificationUriComplete: undefined,
    interval: 5,
    expiresIn: 600,
    ...overrides,
  });
  const signedIn: DevicePoll = { outcome: 'signed_in', signIn: { claims: { sub: 'p' }, refreshToken: undefined, idToken: undefined } };
  const refusal = (poll: Promise<unknown>) => poll.then(() => undefined, (error: unknown) => error as AppError);

  before(async () => {
    db = await sharedDatabase();
  });

  it('keeps the interval at 5 seconds at least and the lifetime at 10 minutes at most, whatever the provider says', async () => {
    const started = await devices().start('corp', authorization({ interval: 1, expiresIn: 1800 }), await counted());
    expect(started).to.include({ interval: 5, expires_in: 600, user_code: 'WDJB-MJHT' });
    expect(started).not.to.have.property('verification_uri_complete');
    expect(started.handle).to.match(/^[A-Za-z0-9_-]{43}$/);
  });

  it('asks the provider once for two polls at once, with the sealed device code and verifier', async () => {
    const sign = devices();
    const { handle } = await sign.start('corp', authorization(), await counted());
    clock += 5000;
    const asked: Array<[string, { deviceCode: string; codeVerifier: string }]> = [];
    const ask = async (connectionId: string, device: { deviceCode: string; codeVerifier: string }): Promise<DevicePoll> => {
      asked.push([connectionId, device]);
      return { outcome: 'authorization_pending' };
    };
    const answers = await Promise.all([refusal(sign.poll(handle, ask)), refusal(sign.poll(handle, ask))]);
    expect(asked).to.deep.equal([['corp', { deviceCode: 'the-device-code', codeVerifier: 'the-verifier' }]]);
    expect(answers.map((a) => a?.code)).to.have.members(['authorization_pending', 'slow_down']);
    const slowed = answers.find((a) => a?.code === 'slow_down')!;
    expect(slowed.status).to.equal(429);
    expect(slowed.headers['Retry-After']).to.equal('10');
  });

  it('gives the sign-in once, and expired_token after it', async () => {
    const sign = devices();
    const { handle } = await sign.start('corp', authorization(), await counted());
    clock += 5000;
    expect(await sign.poll(handle, async () => signedIn)).to.deep.equal({ connectionId: 'corp', signIn: signedIn.outcome === 'signed_in' && signedIn.signIn });
    clock += 5000;
    const again = await refusal(sign.poll(handle, async () => signedIn));
    expect(again).to.include({ status: 400, code: 'expired_token' });
  });

  it('lengthens the interval when the provider asks to slow down', async () => {
    const sign = devices();
    const { handle } = await sign.start('corp', authorization(), await counted());
    clock += 5000;
    const slowed = await refusal(sign.poll(handle, async () => ({ outcome: 'slow_down' })));
    expect(slowed).to.include({ status: 429, code: 'slow_down' });
    clock += 5000;
    expect(await refusal(sign.poll(handle, async () => signedIn))).to.include({ code: 'slow_down' });
  });

  it('keeps the handle when the provider cannot be reached, and ends it when the provider refuses', async () => {
    const sign = devices();
    const { handle } = await sign.start('corp', authorization(), await counted());
    clock += 5000;
    expect(await refusal(sign.poll(handle, () => Promise.reject(new BadGatewayError('unreachable'))))).to.be.instanceOf(BadGatewayError);
    clock += 5000;
    expect(await refusal(sign.poll(handle, () => Promise.reject(new NotAuthenticatedError('invalid_grant'))))).to.be.instanceOf(NotAuthenticatedError);
    clock += 5000;
    expect(await refusal(sign.poll(handle, async () => signedIn))).to.include({ code: 'expired_token' });
  });

  it('ends the handle the person denied, with access_denied', async () => {
    const sign = devices();
    const { handle } = await sign.start('corp', authorization(), await counted());
    clock += 5000;
    expect(await refusal(sign.poll(handle, async () => ({ outcome: 'access_denied' })))).to.include({ status: 403, code: 'access_denied' });
    clock += 5000;
    expect(await refusal(sign.poll(handle, async () => signedIn))).to.include({ code: 'expired_token' });
  });

  it('holds a place of its source until the handle ends, then gives it back', async () => {
    const source = '198.51.100.77';
    const limited = new SignInStarts(db, rateLimitStore, 1, () => clock);
    const sign = new DeviceSignIns({ db, box: testBox, sso: ssoStore, starts: limited, now: () => clock });
    const { handle } = await sign.start('corp', authorization(), await limited.count(source));
    expect(await refusal(limited.count(source))).to.include({ status: 429 });
    clock += 5000;
    await sign.poll(handle, async () => signedIn);
    await limited.count(source);
  });
});
