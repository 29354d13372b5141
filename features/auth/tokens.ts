import crypto from 'node:crypto';
import { SignJWT, decodeJwt, jwtVerify, errors as joseErrors } from 'jose';
import { LRUCache } from 'lru-cache';
import { NotAuthenticatedError, UnavailableError } from '../../kernel/errors/errors.js';
import { isPublished, verificationKey, type TokenKeys } from './keys.js';

// The one algorithm tokens are signed and accepted with: `alg: none`, HS256
// with the public key as secret, RS256 and friends are all refused.
const ALGORITHM = 'EdDSA';

export type Permission = 'user' | 'supervisor' | 'staff';

export interface AccessClaims {
  token_type: 'access';
  user_id: number;
  workspace: string | null;
  workspace_id: number | null;
  permissions: Permission[];
  jti: string;
  iat: number;
  exp: number;
  iss: string;
  aud: string;
  sub: string;
}

export interface RefreshClaims {
  token_type: 'refresh';
  user_id: number;
  workspace: string | null;
  workspace_id: number | null;
  fam: string;
  jti: string;
  iat: number;
  exp: number;
}

export interface TokenSettings {
  issuer: string;
  audience: string;
  accessTtlSeconds: number;
  refreshTtlSeconds: number;
  cacheSize: number;
}

export interface Subject {
  userId: number;
  workspace: { id: number; name: string } | null;
  permissions: Permission[];
}

export class TokenService {
  // Verified access tokens → claims, each kept until its own expiry. Skips only
  // the signature check: every request still re-checks the workspace and
  // membership in the database. Undefined when the size is 0 (no cache).
  private readonly cache: LRUCache<string, AccessClaims> | undefined;

  constructor(
    private readonly keys: TokenKeys,
    private readonly settings: TokenSettings,
    private readonly now: () => number = Date.now,
  ) {
    // ttlResolution 0 reads the injected clock on every check, so no entry outlives its token by a tick.
    this.cache = settings.cacheSize > 0 ? new LRUCache({ max: settings.cacheSize, ttlResolution: 0, perf: { now } }) : undefined;
  }

  get accessTtlSeconds(): number {
    return this.settings.accessTtlSeconds;
  }

  async issueAccess(subject: Subject): Promise<string> {
    return this.sign(
      {
        token_type: 'access',
        user_id: subject.userId,
        workspace: subject.workspace?.name ?? null,
        workspace_id: subject.workspace?.id ?? null,
        permissions: subject.permissions,
      },
      String(subject.userId),
      this.settings.accessTtlSeconds,
    );
  }

  async issueRefresh(subject: Subject, family: string, jti: string): Promise<string> {
    return this.sign(
      {
        token_type: 'refresh',
        user_id: subject.userId,
        workspace: subject.workspace?.name ?? null,
        workspace_id: subject.workspace?.id ?? null,
        fam: family,
      },
      String(subject.userId),
      this.settings.refreshTtlSeconds,
      jti,
    );
  }

  async verifyAccess(token: string): Promise<AccessClaims> {
    const cached = this.cache?.get(token);
    if (cached) return cached;
    const claims = await this.verify(token, 'access');
    this.remember(token, claims as unknown as AccessClaims);
    return claims as unknown as AccessClaims;
  }

  /**
   * The claims of an access token this service signed, checked as of its
   * issue time, so one that has expired since still reads; undefined for
   * anything it did not sign.
   */
  async claimsAsIssued(token: string): Promise<AccessClaims | undefined> {
    let issuedAt: unknown;
    try {
      issuedAt = decodeJwt(token).iat;
    } catch {
      return undefined;
    }
    if (typeof issuedAt !== 'number') return undefined;
    try {
      const { payload } = await jwtVerify(token, verificationKey(this.keys), { ...this.checks(), currentDate: new Date(issuedAt * 1000) });
      return payload.token_type === 'access' && typeof payload.user_id === 'number' ? (payload as unknown as AccessClaims) : undefined;
    } catch {
      return undefined;
    }
  }

  async verifyRefresh(token: string): Promise<RefreshClaims> {
    return (await this.verify(token, 'refresh')) as unknown as RefreshClaims;
  }

  private async sign(claims: Record<string, unknown>, sub: string, ttl: number, jti: string = crypto.randomUUID()): Promise<string> {
    if (isPublished(this.keys) || !this.keys.privateKey) throw new Error('This process holds no signing key and cannot issue tokens.');
    const iat = Math.floor(this.now() / 1000);
    return new SignJWT(claims)
      .setProtectedHeader({ alg: ALGORITHM, kid: this.keys.kid, typ: 'JWT' })
      .setIssuer(this.settings.issuer)
      .setAudience(this.settings.audience)
      .setSubject(sub)
      .setJti(jti)
      .setIssuedAt(iat)
      .setExpirationTime(iat + ttl)
      .sign(this.keys.privateKey);
  }

  private async verify(token: string, type: 'access' | 'refresh'): Promise<Record<string, unknown>> {
    try {
      const { payload } = await jwtVerify(token, verificationKey(this.keys), { ...this.checks(), currentDate: new Date(this.now()) });
      if (payload.token_type !== type) throw new NotAuthenticatedError(`Expected an ${type} token.`);
      if (typeof payload.user_id !== 'number') throw new NotAuthenticatedError('Malformed token.');
      return payload;
    } catch (error) {
      if (error instanceof NotAuthenticatedError) throw error;
      if (this.unreachableKeys(error)) throw new UnavailableError("The auth server's published keys could not be fetched; retry shortly.");
      if (error instanceof joseErrors.JWTExpired) throw new NotAuthenticatedError('Token has expired.');
      throw new NotAuthenticatedError('Token is invalid.');
    }
  }

  /**
   * Whether the published keys could not be fetched (no answer, not 200, not
   * a key set): the caller's token may be fine, so that is no 401. A token
   * whose `kid` the fetched keys lack is refused as any other invalid token.
   */
  private unreachableKeys(error: unknown): boolean {
    if (!isPublished(this.keys)) return false;
    if (error instanceof joseErrors.JWKSTimeout || error instanceof joseErrors.JWKSInvalid) return true;
    return !(error instanceof joseErrors.JOSEError) || error.code === joseErrors.JOSEError.code;
  }

  /** What every token must pass: the pinned algorithm, our issuer and audience, the claims we always set. */
  private checks() {
    return { algorithms: [ALGORITHM], issuer: this.settings.issuer, audience: this.settings.audience, requiredClaims: ['exp', 'iat', 'jti', 'sub'] };
  }

  private remember(token: string, claims: AccessClaims): void {
    // Served while now < exp; a ttl of 0 would mean "never expires" to the cache, so none is stored.
    const ttl = claims.exp * 1000 - this.now() - 1;
    if (ttl > 0) this.cache?.set(token, claims, { ttl });
  }
}
