import type { Db } from '../../infra/db/database.js';
import { NotAuthenticatedError } from '../../kernel/errors/errors.js';
import { sha256 } from '../../infra/crypto/random.js';
import type { ApiTokensStore } from './api-tokens.store.js';
import type { SubjectState, UsersStore } from './users.store.js';
import { permissionsFor, type Principal } from '../auth/principal.js';
import type { ChangeFeed } from '../../infra/db/change-feed.js';
import { ReadCache } from '../../infra/db/read-cache.js';
import type { AccessClaims, TokenService } from '../auth/tokens.js';

export const API_TOKEN_PREFIX = 'dy_';
const LAST_USED_RESOLUTION_MS = 60_000;

/**
 * Turns a bearer credential into a Principal. The signature check of a JWT may
 * come from the token cache; the user, workspace and membership come from a
 * read cache that every change to them invalidates (ChangeFeed), so
 * disabling, deleting or removing takes effect on the next request.
 */
export class Authenticator {
  private readonly states: ReadCache<SubjectState | undefined> | undefined;

  constructor(
    private readonly db: Db,
    private readonly stores: { apiTokens: Pick<ApiTokensStore, 'byHash' | 'touch'>; users: Pick<UsersStore, 'subjectState'> },
    private readonly tokens: TokenService,
    private readonly now: () => number = Date.now,
    cache?: { changes: ChangeFeed; maxEntries: number },
  ) {
    this.states = cache && new ReadCache(cache.changes, 'identity', { maxEntries: cache.maxEntries, maxAgeMs: 60_000, now });
  }

  async authenticate(credential: string): Promise<Principal> {
    return credential.startsWith(API_TOKEN_PREFIX) ? this.fromApiToken(credential) : this.fromJwt(credential);
  }

  /**
   * Whether a credential still authenticates, and what it says: a token of
   * ours that expired or was revoked since is `valid: false` with its claims;
   * anything else (forged, malformed, unknown) is refused as by `authenticate`.
   */
  async inspect(credential: string): Promise<{ valid: boolean; tokenData: Record<string, unknown> }> {
    try {
      return { valid: true, tokenData: (await this.authenticate(credential)).tokenData };
    } catch (error) {
      if (!(error instanceof NotAuthenticatedError)) throw error;
      const tokenData = await this.claimsAsIssued(credential);
      if (!tokenData) throw error;
      return { valid: false, tokenData };
    }
  }

  private async claimsAsIssued(credential: string): Promise<Record<string, unknown> | undefined> {
    if (!credential.startsWith(API_TOKEN_PREFIX)) {
      const claims = await this.tokens.claimsAsIssued(credential);
      return claims && { ...claims };
    }
    const row = await this.stores.apiTokens.byHash(this.db, sha256(credential));
    if (!row) return undefined;
    return {
      token_type: 'api_token',
      jti: `api-token-${row.id}`,
      iat: Math.floor(row.created.getTime() / 1000),
      exp: Math.floor(Date.parse(`${row.expiration_date}T23:59:59Z`) / 1000),
      user_id: row.user_id,
      permissions: [],
      workspace: null,
    };
  }

  private async fromJwt(token: string): Promise<Principal> {
    const claims = await this.tokens.verifyAccess(token);
    const state = await this.loadState(claims.user_id, claims.workspace_id);
    if (claims.workspace_id !== null && state.ws_name !== claims.workspace) throw new NotAuthenticatedError('Token is invalid.');
    return this.principal(state, claims.workspace_id !== null, 'jwt', { ...claims });
  }

  private async fromApiToken(credential: string): Promise<Principal> {
    const row = await this.stores.apiTokens.byHash(this.db, sha256(credential));
    if (!row) throw new NotAuthenticatedError('Token is invalid.');
    if (!row.is_active) throw new NotAuthenticatedError('This API token has been revoked.');
    const today = new Date(this.now()).toISOString().slice(0, 10);
    if (row.expiration_date < today) throw new NotAuthenticatedError('This API token has expired.');
    const state = await this.loadState(row.user_id, row.workspace_id);
    const principal = this.principal(state, true, 'api_token', {
      token_type: 'api_token',
      jti: `api-token-${row.id}`,
      iat: Math.floor(row.created.getTime() / 1000),
      exp: Math.floor(Date.parse(`${row.expiration_date}T23:59:59Z`) / 1000),
    });
    if (!row.last_used || this.now() - row.last_used.getTime() > LAST_USED_RESOLUTION_MS) {
      await this.stores.apiTokens.touch(this.db, row.id, new Date(this.now()));
    }
    return principal;
  }

  private async loadState(userId: number, workspaceId: number | null): Promise<SubjectState> {
    const read = () => this.readState(userId, workspaceId);
    const state = await (this.states ? this.states.get(`${userId}:${workspaceId}`, read) : read());
    if (!state || !state.is_active) throw new NotAuthenticatedError('The user of this token is no longer active.');
    return state;
  }

  private async readState(userId: number, workspaceId: number | null): Promise<SubjectState | undefined> {
    return this.stores.users.subjectState(this.db, userId, workspaceId);
  }

  private principal(state: SubjectState, bound: boolean, via: Principal['via'], tokenFields: Record<string, unknown>): Principal {
    if (bound) {
      if (state.ws_id === null || state.ws_deleted_at) throw new NotAuthenticatedError('The workspace of this token no longer exists.');
      if (state.ws_disabled) throw new NotAuthenticatedError('The workspace of this token is disabled.');
      if (!state.role) throw new NotAuthenticatedError('The user of this token is no longer a member of its workspace.');
    }
    const workspace = bound && state.ws_id !== null && state.ws_name !== null ? { id: state.ws_id, name: state.ws_name } : null;
    const permissions = permissionsFor(state.is_staff, workspace ? state.role : null);
    return {
      user: { id: state.id, email: state.email, isStaff: state.is_staff, isService: state.is_service },
      workspace,
      permissions,
      via,
      tokenData: { ...tokenFields, user_id: state.id, workspace: workspace?.name ?? null, permissions },
    };
  }
}

export type { AccessClaims };
