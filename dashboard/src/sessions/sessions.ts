import type { Db } from '../../../infra/db/database.js';
import type { SecretBox } from '../../../infra/crypto/secrets.js';
import type { Authenticator } from '../../../features/identity/authenticator.js';
import type { Principal } from '../../../features/auth/principal.js';
import type { LoginService, TokenPair } from '../../../features/identity/login.service.js';
import type { WorkspacesService } from '../../../features/identity/workspaces.service.js';
import { NotAuthenticatedError } from '../../../kernel/errors/errors.js';
import { randomToken, sha256 } from '../../../infra/crypto/random.js';
import { dashboardSessionsStore as store, type DashboardSessionRow } from './store.js';

/** What the session cookie may hold: 32 random bytes, base64url. Anything else is never looked up. */
const SESSION_ID = /^[A-Za-z0-9_-]{43}$/;

export interface SessionDeps {
  db: Db;
  box: SecretBox;
  login: LoginService;
  workspaces: WorkspacesService;
  authenticator: Authenticator;
  now: () => number;
  /** Seconds a session lives after its last token refresh (the refresh token's lifetime). */
  lifetimeSeconds: number;
}

export interface Credentials {
  email: string;
  password: string;
  workspace: string | null;
}

/**
 * Dashboard sign-in sessions. The browser holds an opaque id; the user's
 * access and refresh tokens stay here, and every request turns the access
 * token into a Principal through the same Authenticator as the API, so the
 * dashboard has exactly the permissions its user has there.
 */
export class DashboardSessions {
  // One refresh at a time per session: a rotated refresh token presented twice
  // would revoke the whole family (reuse detection) and sign the user out.
  private readonly refreshing = new Map<string, Promise<TokenPair | null>>();

  constructor(private readonly deps: SessionDeps) {}

  /** Signs in and returns the new session's id (for the cookie only). */
  async signIn(credentials: Credentials, clientAddress: string): Promise<string> {
    const pair = (await this.deps.login.obtain(credentials, clientAddress)).tokens;
    return this.open(credentials.workspace === null ? await this.intoOnlyWorkspace(pair) : pair);
  }

  /** A session for tokens issued to a person signed in elsewhere (single sign-on), bound to no workspace yet. */
  async signInVerified(pair: TokenPair): Promise<string> {
    return this.open(await this.intoOnlyWorkspace(pair));
  }

  private async open(pair: TokenPair): Promise<string> {
    const principal = await this.deps.authenticator.authenticate(pair.access);
    const id = randomToken(32);
    await store.insert(this.deps.db, { id_hash: sha256(id), user_id: principal.user.id, ...this.stored(pair, principal) });
    await store.removeExpired(this.deps.db, new Date(this.deps.now()));
    return id;
  }

  /** The principal of a live session, refreshing its access token when needed; null once the session is over. */
  async resume(id: string): Promise<Principal | null> {
    const row = await this.row(id);
    if (!row) return null;
    const principal = await this.principalOf(this.tokensOf(row).access);
    if (principal) return principal;
    const renewed = await this.refreshOnce(row);
    const renewedPrincipal = renewed ? await this.principalOf(renewed.access) : null;
    if (!renewedPrincipal) await store.remove(this.deps.db, row.id_hash);
    return renewedPrincipal;
  }

  /** Moves the session to another workspace the user belongs to (checked like a login). */
  async switchWorkspace(id: string, principal: Principal, workspace: string | null): Promise<void> {
    const row = await this.row(id);
    if (!row) throw new NotAuthenticatedError('Your session has ended.');
    const previous = this.tokensOf(row);
    const pair = await this.deps.login.switchWorkspace(principal, workspace, previous.refresh);
    const next = await this.deps.authenticator.authenticate(pair.access);
    await store.replaceTokens(this.deps.db, row.id_hash, this.stored(pair, next), new Date(this.deps.now()));
    await this.deps.login.revoke(previous.refresh);
  }

  /** The refresh token of a live session (to find what else its sign-in opened, at the provider). */
  async refreshTokenOf(id: string): Promise<string | undefined> {
    const row = await this.row(id);
    return row ? this.tokensOf(row).refresh || undefined : undefined;
  }

  /** Ends the session here and its refresh token family at the auth server. */
  async signOut(id: string): Promise<void> {
    const row = await this.row(id);
    if (!row) return;
    await store.remove(this.deps.db, row.id_hash);
    await this.deps.login.revoke(this.tokensOf(row).refresh);
  }

  private async row(id: string): Promise<DashboardSessionRow | undefined> {
    if (!SESSION_ID.test(id)) return undefined;
    return store.live(this.deps.db, sha256(id), new Date(this.deps.now()));
  }

  /** Without a chosen workspace, a user of exactly one workspace lands in it. */
  private async intoOnlyWorkspace(pair: TokenPair): Promise<TokenPair> {
    const principal = await this.deps.authenticator.authenticate(pair.access);
    const workspaces = await this.deps.workspaces.memberships(principal, { limit: 2, offset: 0 });
    if (workspaces.length !== 1 || workspaces[0]!.disabled) return pair;
    const bound = await this.deps.login.switchWorkspace(principal, workspaces[0]!.name, pair.refresh);
    await this.deps.login.revoke(pair.refresh);
    return bound;
  }

  private async principalOf(access: string): Promise<Principal | null> {
    try {
      return await this.deps.authenticator.authenticate(access);
    } catch (error) {
      if (error instanceof NotAuthenticatedError) return null;
      throw error;
    }
  }

  private refreshOnce(row: DashboardSessionRow): Promise<TokenPair | null> {
    const running = this.refreshing.get(row.id_hash);
    if (running) return running;
    const refresh = this.refresh(row).finally(() => this.refreshing.delete(row.id_hash));
    this.refreshing.set(row.id_hash, refresh);
    return refresh;
  }

  private async refresh(row: DashboardSessionRow): Promise<TokenPair | null> {
    let pair: TokenPair;
    try {
      pair = await this.deps.login.refresh(this.tokensOf(row).refresh);
    } catch (error) {
      if (error instanceof NotAuthenticatedError) return null;
      throw error;
    }
    const tokens = { workspace_id: row.workspace_id, tokens_sealed: this.deps.box.sealJson({ ...pair }), expires_at: this.expiry() };
    await store.replaceTokens(this.deps.db, row.id_hash, tokens, new Date(this.deps.now()));
    return pair;
  }

  private stored(pair: TokenPair, principal: Principal) {
    return { workspace_id: principal.workspace?.id ?? null, tokens_sealed: this.deps.box.sealJson({ ...pair }), expires_at: this.expiry() };
  }

  /** The stored pair; one sealed under a key since replaced reads as empty tokens, which simply end the session. */
  private tokensOf(row: DashboardSessionRow): TokenPair {
    try {
      const { access, refresh } = this.deps.box.openJson(row.tokens_sealed);
      return { access: access ?? '', refresh: refresh ?? '' };
    } catch {
      return { access: '', refresh: '' };
    }
  }

  private expiry(): Date {
    return new Date(this.deps.now() + this.deps.lifetimeSeconds * 1000);
  }
}
