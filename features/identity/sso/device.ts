import type { Db } from '../../../infra/db/database.js';
import type { SecretBox } from '../../../infra/crypto/secrets.js';
import { randomToken, sha256 } from '../../../infra/crypto/random.js';
import type { DeviceAuthorization, DevicePoll, ProviderSignIn } from '../../../infra/oidc/provider.js';
import { BadGatewayError, DeviceSignInError } from '../../../kernel/errors/errors.js';
import type { SsoStore } from './store.js';
import type { SignInStarts, StartCount } from './starts.js';

/** What the CLI gets at the start of a device sign-in (the OpenAPI schema DeviceSignIn): its handle, and what to show the person. */
export interface DeviceSignInStart {
  handle: string;
  user_code: string;
  verification_uri: string;
  verification_uri_complete?: string;
  interval: number;
  expires_in: number;
}

/** Seconds at most a device sign-in is kept, whatever the provider allows: as long as a browser's sign-in. */
const DEVICE_TTL_SECONDS = 600;
/** RFC 8628's default interval, and the least one didyma accepts from a provider: a handle reaches the provider at most this often. */
const MIN_INTERVAL_SECONDS = 5;
/** RFC 8628 §3.5: each slow_down lengthens the interval by 5 seconds. */
const SLOW_DOWN_SECONDS = 5;

/**
 * Device sign-ins under way: the provider's device code stays on the
 * server, sealed, and the CLI polls with an opaque handle. Each poll of a
 * handle makes at most one token request, and only once its interval has
 * passed; a finished sign-in (tokens, denied, expired) ends the handle.
 */
export class DeviceSignIns {
  constructor(private readonly deps: { db: Db; box: SecretBox; sso: SsoStore; starts: SignInStarts; now: () => number }) {}

  /** Keeps the provider's device authorization for `connectionId`, counted as `counted`; returns the CLI's handle and what the person needs. */
  async start(connectionId: string, authorization: DeviceAuthorization, counted: StartCount): Promise<DeviceSignInStart> {
    const handle = randomToken(32);
    const now = this.deps.now();
    const interval = Math.max(authorization.interval, MIN_INTERVAL_SECONDS);
    const expiresIn = Math.min(authorization.expiresIn, DEVICE_TTL_SECONDS);
    await this.deps.sso.startDeviceSignIn(
      this.deps.db,
      {
        handle_hash: sha256(handle),
        connection_id: connectionId,
        secrets_sealed: this.deps.box.sealJson({ deviceCode: authorization.deviceCode, codeVerifier: authorization.codeVerifier }),
        interval_seconds: interval,
        next_poll_at: new Date(now + interval * 1000),
        source_key_hash: counted.keyHash,
        source_window_ends: counted.resetAt,
        expires_at: new Date(now + expiresIn * 1000),
      },
      new Date(now),
    );
    const complete = authorization.verificationUriComplete ? { verification_uri_complete: authorization.verificationUriComplete } : {};
    return { handle, user_code: authorization.userCode, verification_uri: authorization.verificationUri, ...complete, interval, expires_in: expiresIn };
  }

  /**
   * One poll of the handle: `ask` makes the token request with the device
   * code and PKCE verifier. The provider's sign-in, once; otherwise the typed refusal of RFC
   * 8628. A provider that cannot be reached (502) leaves the handle as it was.
   */
  async poll(handle: string, ask: (connectionId: string, device: { deviceCode: string; codeVerifier: string }) => Promise<DevicePoll>): Promise<{ connectionId: string; signIn: ProviderSignIn }> {
    const handleHash = sha256(handle);
    const now = new Date(this.deps.now());
    const row = await this.deps.sso.claimDevicePoll(this.deps.db, handleHash, now);
    if (!row) return this.slowDown(handleHash, 'You are polling faster than the interval');
    let answer: DevicePoll;
    try {
      const { deviceCode, codeVerifier } = this.deps.box.openJson(row.secrets_sealed);
      answer = await ask(row.connection_id, { deviceCode: deviceCode ?? '', codeVerifier: codeVerifier ?? '' });
    } catch (error) {
      if (!(error instanceof BadGatewayError)) await this.end(handleHash);
      throw error;
    }
    if (answer.outcome === 'authorization_pending') throw new DeviceSignInError('authorization_pending', 'The sign-in is not finished yet: ask again after the interval.');
    if (answer.outcome === 'slow_down') return this.slowDown(handleHash, 'The identity provider asks to poll more slowly');
    // The provider gives a device code's tokens once, so ending the handle here is what makes it work once.
    await this.end(handleHash);
    if (answer.outcome === 'signed_in') return { connectionId: row.connection_id, signIn: answer.signIn };
    throw answer.outcome === 'access_denied' ? new DeviceSignInError('access_denied', 'The sign-in was refused at the identity provider.') : expired();
  }

  private async slowDown(handleHash: string, reason: string): Promise<never> {
    const now = this.deps.now();
    const slowed = await this.deps.sso.slowDeviceSignIn(this.deps.db, handleHash, SLOW_DOWN_SECONDS, new Date(now));
    if (!slowed) throw expired();
    throw new DeviceSignInError('slow_down', `${reason}: wait ${slowed.interval_seconds} seconds between polls.`, slowed.interval_seconds);
  }

  /** Ends the handle, and gives its start back to its source's count. */
  private async end(handleHash: string): Promise<void> {
    const row = await this.deps.sso.endDeviceSignIn(this.deps.db, handleHash);
    if (row?.source_key_hash && row.source_window_ends) await this.deps.starts.takeBack({ keyHash: row.source_key_hash, resetAt: new Date(row.source_window_ends) });
  }
}

const expired = () => new DeviceSignInError('expired_token', 'This device sign-in has expired or was already used: start it again.');
