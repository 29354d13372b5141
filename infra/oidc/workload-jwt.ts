import { createRemoteJWKSet, errors as joseErrors, jwtVerify, type JWTPayload } from 'jose';
import { BadGatewayError, OAuthError } from '../../kernel/errors/errors.js';

/** One issuer of workload JWTs, as the verifier needs it. */
export interface JwtIssuerSettings {
  issuer: string;
  audience: string;
  /** Absent: read from `<issuer>/.well-known/openid-configuration`. */
  jwksUri: string | undefined;
  algorithms: string[];
  /** Least time between two fetches of the keys, so unknown `kid`s cannot make us fetch them at will. */
  cooldownMs: number;
  timeoutMs: number;
}

type KeySet = ReturnType<typeof createRemoteJWKSet>;

/**
 * Checks JWTs of one issuer with jose: the signature against the issuer's
 * JWKS (cached by createRemoteJWKSet, fetched again for an unknown `kid` at
 * most once per cooldown), the pinned algorithms, the issuer, the audience,
 * `exp` and `nbf`. A token that fails is an RFC 8693 `invalid_request`.
 */
export class JwtIssuerVerifier {
  private keys: Promise<KeySet> | undefined;

  constructor(private readonly settings: JwtIssuerSettings) {}

  get issuer(): string {
    return this.settings.issuer;
  }

  async verify(token: string): Promise<JWTPayload> {
    const keys = await this.keySet();
    const { issuer, audience, algorithms } = this.settings;
    try {
      const { payload } = await jwtVerify(token, keys, { issuer, audience, algorithms, requiredClaims: ['exp'] });
      return payload;
    } catch (error) {
      throw refusal(error);
    }
  }

  private keySet(): Promise<KeySet> {
    this.keys ??= this.jwksUri().then(
      (uri) => createRemoteJWKSet(new URL(uri), { cooldownDuration: this.settings.cooldownMs, timeoutDuration: this.settings.timeoutMs }),
      (error: unknown) => {
        this.keys = undefined;
        throw error;
      },
    );
    return this.keys;
  }

  private async jwksUri(): Promise<string> {
    const { issuer, jwksUri, timeoutMs } = this.settings;
    if (jwksUri) return jwksUri;
    const url = `${issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`;
    let document: { issuer?: unknown; jwks_uri?: unknown };
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(timeoutMs), redirect: 'error' });
      if (!response.ok) throw new Error(`status ${response.status}`);
      document = (await response.json()) as typeof document;
    } catch (error) {
      throw new BadGatewayError(`The workload issuer ${issuer} sent no discovery document: ${(error as Error).message}`);
    }
    if (document.issuer !== issuer || typeof document.jwks_uri !== 'string') {
      throw new BadGatewayError(`The discovery document of ${issuer} names another issuer or no jwks_uri.`);
    }
    return document.jwks_uri;
  }
}

/** What a token that fails a check is answered; the issuer unreachable is a 502, not the caller's fault. */
function refusal(error: unknown): Error {
  const refuse = (reason: string) => new OAuthError(400, 'invalid_request', `The subject_token was refused: ${reason}.`);
  if (error instanceof joseErrors.JWKSTimeout || error instanceof joseErrors.JWKSInvalid) return new BadGatewayError('The workload issuer\'s keys could not be fetched.');
  if (error instanceof joseErrors.JWTExpired) return refuse('it has expired');
  if (error instanceof joseErrors.JWTClaimValidationFailed && error.claim === 'nbf') return refuse('it is not valid yet');
  if (error instanceof joseErrors.JWTClaimValidationFailed) return refuse(`its "${error.claim}" claim ${error.reason === 'check_failed' ? 'does not match' : 'is missing or invalid'}`);
  if (error instanceof joseErrors.JOSEAlgNotAllowed) return refuse('its signing algorithm is not allowed');
  if (error instanceof joseErrors.JWKSNoMatchingKey || error instanceof joseErrors.JWKSMultipleMatchingKeys) return refuse('no key of the issuer matches its "kid"');
  if (error instanceof joseErrors.JWSSignatureVerificationFailed) return refuse('its signature does not verify');
  // jose's generic error is the keys' endpoint answering other than 200.
  if (error instanceof joseErrors.JOSEError && error.code === 'ERR_JOSE_GENERIC') return new BadGatewayError('The workload issuer\'s keys could not be fetched.');
  if (error instanceof joseErrors.JOSEError) return refuse('it is not a valid signed JWT');
  if (error instanceof TypeError || error instanceof SyntaxError) return new BadGatewayError('The workload issuer\'s keys could not be fetched.');
  return error instanceof Error ? error : new Error(String(error));
}
