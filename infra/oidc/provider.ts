import * as oidc from 'openid-client';
import { BadGatewayError, NotAuthenticatedError } from '../../kernel/errors/errors.js';

/** What identifies didyma as a client of one OpenID Provider. */
export interface ProviderSettings {
  issuer: string;
  clientId: string;
  /** Absent: a public client (no client authentication). */
  clientSecret: string | undefined;
  scopes: string[];
  /** Seconds each request to the provider may take. */
  timeoutSeconds: number;
}

/** The values an authorization request binds, to be checked when its response comes back. */
export interface PendingChecks {
  state: string;
  nonce: string;
  codeVerifier: string;
}

/** The provider's answer to a sign-in or a refresh: the verified ID token's claims and the refresh token, when one came. */
export interface ProviderSignIn {
  claims: Record<string, unknown>;
  refreshToken: string | undefined;
  idToken: string | undefined;
}

/** The provider's answer to a device authorization request (RFC 8628 §3.2), with the PKCE verifier the request's challenge binds. */
export interface DeviceAuthorization {
  deviceCode: string;
  codeVerifier: string;
  userCode: string;
  verificationUri: string;
  verificationUriComplete: string | undefined;
  /** Seconds between two token requests; RFC 8628's 5 when the provider names none. */
  interval: number;
  expiresIn: number;
}

/** RFC 8628's error codes of a device token request: still waiting, poll slower, the code expired, the person said no. */
export type DeviceGrantError = 'authorization_pending' | 'slow_down' | 'expired_token' | 'access_denied';

/** One token request of the device flow: one of RFC 8628's errors, or signed in. */
export type DevicePoll = { outcome: DeviceGrantError } | { outcome: 'signed_in'; signIn: ProviderSignIn };

const DEVICE_CODE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';
const DEVICE_GRANT_ERRORS: ReadonlySet<string> = new Set<DeviceGrantError>(['authorization_pending', 'slow_down', 'expired_token', 'access_denied']);
const isDeviceGrantError = (error: string): error is DeviceGrantError => DEVICE_GRANT_ERRORS.has(error);

/**
 * One OpenID Provider through openid-client: discovery (once, again after a
 * failure), the authorization URL with PKCE, `state` and `nonce`, and the
 * code exchange, whose ID token openid-client checks (signature against the
 * provider's JWKS, issuer, audience, expiry, nonce); the device flow's
 * authorization and token requests, one at a time. Failures become typed
 * errors: the provider refusing is a 401, the provider unreachable a 502.
 */
export class OpenIdProvider {
  private configuration: Promise<oidc.Configuration> | undefined;

  constructor(private readonly settings: ProviderSettings) {}

  /** Where to send the browser, and the checks to keep until it comes back. */
  async authorizationRequest(redirectUri: string): Promise<{ url: string; checks: PendingChecks }> {
    const config = await this.config();
    const checks = { state: oidc.randomState(), nonce: oidc.randomNonce(), codeVerifier: oidc.randomPKCECodeVerifier() };
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: redirectUri,
      scope: this.settings.scopes.join(' '),
      response_type: 'code',
      state: checks.state,
      nonce: checks.nonce,
      code_challenge: await oidc.calculatePKCECodeChallenge(checks.codeVerifier),
      code_challenge_method: 'S256',
    });
    return { url: url.href, checks };
  }

  /** Redeems the code of the provider's redirect to `callbackUrl`, with the checks of its request. */
  async redeem(callbackUrl: URL, checks: PendingChecks): Promise<ProviderSignIn> {
    const config = await this.config();
    return this.answer(() =>
      oidc.authorizationCodeGrant(config, callbackUrl, {
        pkceCodeVerifier: checks.codeVerifier,
        expectedState: checks.state,
        expectedNonce: checks.nonce,
        idTokenExpected: true,
      }),
    );
  }

  /** Starts a device sign-in at the provider's device_authorization_endpoint (RFC 8628). */
  async deviceAuthorization(): Promise<DeviceAuthorization> {
    const config = await this.config();
    if (!config.serverMetadata().device_authorization_endpoint) throw new BadGatewayError(`The identity provider ${this.settings.issuer} offers no device authorization.`);
    // PKCE binds the token requests to this server, and providers that require it on every client (Keycloak can) need it here too.
    const codeVerifier = oidc.randomPKCECodeVerifier();
    const challenge = { code_challenge: await oidc.calculatePKCECodeChallenge(codeVerifier), code_challenge_method: 'S256' };
    try {
      const answer = await oidc.initiateDeviceAuthorization(config, { scope: this.settings.scopes.join(' '), ...challenge });
      return {
        deviceCode: answer.device_code,
        codeVerifier,
        userCode: answer.user_code,
        verificationUri: answer.verification_uri,
        verificationUriComplete: answer.verification_uri_complete,
        interval: answer.interval ?? 5,
        expiresIn: answer.expires_in,
      };
    } catch (error) {
      throw providerFailure(error);
    }
  }

  /**
   * One token request with the device code and its PKCE verifier.
   * openid-client's own poller loops until the person is done; the server
   * makes one request per poll of its client instead, through the grant
   * request that poller makes, so the ID token is checked as by
   * pollDeviceAuthorizationGrant (signature, issuer, audience, expiry).
   */
  async pollDevice(device: { deviceCode: string; codeVerifier: string }): Promise<DevicePoll> {
    const config = await this.config();
    let tokens: Awaited<ReturnType<typeof oidc.genericGrantRequest>>;
    try {
      tokens = await oidc.genericGrantRequest(config, DEVICE_CODE_GRANT, { device_code: device.deviceCode, code_verifier: device.codeVerifier });
    } catch (error) {
      if (error instanceof oidc.ResponseBodyError && isDeviceGrantError(error.error)) return { outcome: error.error };
      throw providerFailure(error);
    }
    return { outcome: 'signed_in', signIn: signInOf(tokens) };
  }

  /**
   * Asks the provider again with its refresh token: the person's claims now,
   * from the new ID token (checked as at sign-in, less the nonce) or, when the
   * provider sends none, from its userinfo endpoint, for the same subject.
   */
  async refresh(refreshToken: string, subject: string): Promise<ProviderSignIn> {
    const config = await this.config();
    try {
      const tokens = await oidc.refreshTokenGrant(config, refreshToken);
      const claims = tokens.claims() ?? (await oidc.fetchUserInfo(config, tokens.access_token, subject));
      if (claims.sub !== subject) throw new NotAuthenticatedError('The identity provider answered for another person.');
      return { claims: { ...claims }, refreshToken: tokens.refresh_token ?? refreshToken, idToken: tokens.id_token };
    } catch (error) {
      throw error instanceof NotAuthenticatedError ? error : providerFailure(error);
    }
  }

  /** The provider's logout URL for this ID token, or null when it has none (no end_session_endpoint). */
  async endSessionUrl(idToken: string, postLogoutRedirectUri: string): Promise<string | null> {
    const config = await this.config();
    if (!config.serverMetadata().end_session_endpoint) return null;
    return oidc.buildEndSessionUrl(config, { id_token_hint: idToken, post_logout_redirect_uri: postLogoutRedirectUri }).href;
  }

  private async answer(grant: () => ReturnType<typeof oidc.authorizationCodeGrant>): Promise<ProviderSignIn> {
    let tokens: Awaited<ReturnType<typeof oidc.authorizationCodeGrant>>;
    try {
      tokens = await grant();
    } catch (error) {
      throw providerFailure(error);
    }
    return signInOf(tokens);
  }

  private config(): Promise<oidc.Configuration> {
    this.configuration ??= this.discover().catch((error: unknown) => {
      this.configuration = undefined;
      throw error;
    });
    return this.configuration;
  }

  private async discover(): Promise<oidc.Configuration> {
    const { issuer, clientId, clientSecret, timeoutSeconds } = this.settings;
    const url = new URL(issuer);
    const auth = clientSecret === undefined ? oidc.None() : oidc.ClientSecretBasic(clientSecret);
    let config: oidc.Configuration;
    try {
      // Plain http is accepted for a loopback issuer only (kernel/config/oidc.ts refuses any other).
      const execute = url.protocol === 'http:' ? [oidc.allowInsecureRequests] : [];
      config = await oidc.discovery(url, clientId, undefined, auth, { execute, timeout: timeoutSeconds });
    } catch (error) {
      throw new BadGatewayError(`The identity provider ${issuer} could not be reached or sent no valid discovery document: ${messageOf(error)}`);
    }
    // The ID token of a code exchange is also checked against the provider's keys, not only trusted for coming over TLS.
    oidc.enableNonRepudiationChecks(config);
    return config;
  }
}

/** The verified ID token's claims and the provider's tokens; an answer without an ID token is refused. */
function signInOf(tokens: Awaited<ReturnType<typeof oidc.genericGrantRequest>>): ProviderSignIn {
  const claims = tokens.claims();
  if (!claims) throw new NotAuthenticatedError('The identity provider sent no ID token.');
  return { claims: { ...claims }, refreshToken: tokens.refresh_token, idToken: tokens.id_token };
}

/** The provider refused (a refresh token it no longer knows, say) or sent something that fails a check: 401; it could not be reached: 502. */
function providerFailure(error: unknown): Error {
  if (error instanceof oidc.AuthorizationResponseError) {
    return new NotAuthenticatedError(`The identity provider refused the sign-in: ${error.error}${error.error_description ? ` (${error.error_description})` : ''}.`);
  }
  if (error instanceof oidc.ResponseBodyError) {
    return new NotAuthenticatedError(`The identity provider refused the code: ${error.error}${error.error_description ? ` (${error.error_description})` : ''}.`);
  }
  if (error instanceof oidc.ClientError) return new NotAuthenticatedError(`The identity provider's answer was refused: ${reasonOf(error)}.`);
  return new BadGatewayError(`The identity provider could not be reached: ${messageOf(error)}`);
}

/** openid-client's message, and the check that failed beneath it (its cause) when it names one. */
function reasonOf(error: InstanceType<typeof oidc.ClientError>): string {
  const cause = error.cause instanceof Error && error.cause.message !== error.message ? `: ${error.cause.message}` : '';
  return `${error.message}${cause}`;
}

const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error));
