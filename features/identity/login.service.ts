import crypto from 'node:crypto';
import type { Db, Runner } from '../../infra/db/database.js';
import { NotAllowedError, NotAuthenticatedError, OAuthError } from '../../kernel/errors/errors.js';
import { constantTimeEqual, sha256 } from '../../infra/crypto/random.js';
import { verifyPassword } from '../auth/passwords.js';
import { permissionsFor, type Principal } from '../auth/principal.js';
import type { LoginGuard } from '../auth/login-guard.js';
import type { Subject, TokenService } from '../auth/tokens.js';
import { normaliseEmail, type UsersStore } from './users.store.js';
import type { WorkspacesStore } from './workspaces.store.js';
import type { RefreshStore } from './refresh.store.js';
import type { OAuthStore } from './oauth.store.js';

export interface TokenPair {
  access: string;
  refresh: string;
}

/** A log-in's tokens, and whom they were issued to (for the audit trail; never sent), in which token family. */
export interface SignedIn {
  tokens: TokenPair;
  subject: Subject;
  family: string;
}

/** What a refresh asks besides didyma's own checks: the identity provider of a single sign-on (features/identity/sso/). */
export interface RefreshFollower {
  /** Before the family is refreshed; throws NotAuthenticatedError (having ended the family) to refuse it. */
  follow(familyId: string): Promise<void>;
  /** The family `toFamily` carries on the sign-in of `fromFamily` (a workspace switch). */
  carry(fromFamily: string, toFamily: string): Promise<void>;
}

export interface ClientCredentialsResponse {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  scope: string;
}

export interface LoginDeps {
  db: Db;
  stores: { users: UsersStore; workspaces: WorkspacesStore; refresh: RefreshStore; oauth: OAuthStore };
  tokens: TokenService;
  guard: LoginGuard;
  /** Set once single sign-on is wired: the families it opened follow the provider. */
  follower?: RefreshFollower;
  /** Who may sign in with a password: staff only once everyone else signs in through single sign-on. */
  passwordSignIn: 'everyone' | 'staff';
}

export class LoginService {
  constructor(private readonly deps: LoginDeps) {}

  /** POST /api/auth/token/obtain */
  async obtain(input: { email: string; password: string; workspace?: string | null }, clientAddress: string): Promise<SignedIn> {
    const email = normaliseEmail(input.email);
    const pass = await this.deps.guard.admit('login', email, clientAddress);
    const user = await this.deps.stores.users.byEmail(this.deps.db, email);
    const passwordOk = await verifyPassword(user?.password_hash ?? null, input.password);
    if (!user || !passwordOk || !user.is_active || user.is_service) throw new NotAuthenticatedError('Invalid e-mail or password.');
    await this.deps.guard.succeeded(pass);
    if (this.deps.passwordSignIn === 'staff' && !user.is_staff) throw new NotAllowedError('Password sign-in is kept for staff here: sign in through single sign-on.');
    const subject = await this.subjectFor(this.deps.db, user.id, user.is_staff, input.workspace ?? null);
    return { ...(await this.openFamily(subject)), subject };
  }

  /**
   * Tokens for a person another party authenticated (single sign-on), bound
   * to the workspace named (none by default), with the checks of a login.
   */
  async signInVerified(userId: number, workspace: string | null = null): Promise<SignedIn> {
    const user = await this.deps.stores.users.byId(this.deps.db, userId);
    if (!user || !user.is_active || user.is_service) throw new NotAuthenticatedError('This account is not active.');
    const subject = await this.subjectFor(this.deps.db, user.id, user.is_staff, workspace);
    return { ...(await this.openFamily(subject)), subject };
  }

  /** POST /api/auth/token/refresh: rotates the refresh token; a reused one revokes its family. */
  async refresh(refreshToken: string): Promise<TokenPair> {
    const claims = await this.deps.tokens.verifyRefresh(refreshToken);
    if (this.deps.follower && (await this.isCurrent(claims))) await this.deps.follower.follow(claims.fam);
    const jti = crypto.randomUUID();
    const outcome = await this.deps.db.transaction(async (trx) => {
      const family = await this.deps.stores.refresh.lockById(trx, claims.fam);
      if (!family || family.revoked_at) return { kind: 'revoked' as const };
      if (!constantTimeEqual(family.current_jti_hash, sha256(claims.jti))) {
        await this.deps.stores.refresh.revoke(trx, family.id, 'reuse');
        return { kind: 'reused' as const };
      }
      const user = await this.deps.stores.users.byId(trx, family.user_id);
      if (!user || !user.is_active) return { kind: 'revoked' as const };
      const workspaceName = family.workspace_id === null ? null : ((await this.deps.stores.workspaces.liveById(trx, family.workspace_id))?.name ?? '');
      const subject = await this.subjectFor(trx, user.id, user.is_staff, workspaceName).catch(() => null);
      if (!subject) return { kind: 'revoked' as const };
      await this.deps.stores.refresh.rotate(trx, family.id, sha256(jti));
      return { kind: 'ok' as const, subject, family: family.id };
    });
    if (outcome.kind === 'reused') throw new NotAuthenticatedError('Refresh token was already used; its session has been revoked.');
    if (outcome.kind === 'revoked') throw new NotAuthenticatedError('Refresh token has been revoked.');
    return {
      access: await this.deps.tokens.issueAccess(outcome.subject),
      refresh: await this.deps.tokens.issueRefresh(outcome.subject, outcome.family, jti),
    };
  }

  /**
   * The dashboard's workspace switcher: a new token family for the same user,
   * bound to another workspace (or none), with the membership checks of a
   * login. The caller proved who it is with a valid access token.
   */
  async switchWorkspace(principal: Principal, workspace: string | null, previousRefresh?: string): Promise<TokenPair> {
    const user = await this.deps.stores.users.byId(this.deps.db, principal.user.id);
    if (!user || !user.is_active || user.is_service) throw new NotAuthenticatedError('The user of this session is no longer active.');
    const { tokens, family } = await this.openFamily(await this.subjectFor(this.deps.db, user.id, user.is_staff, workspace));
    await this.carryOn(user.id, previousRefresh, family);
    return tokens;
  }

  /** The new family goes on following the provider the previous one of the same user followed. */
  private async carryOn(userId: number, previousRefresh: string | undefined, family: string): Promise<void> {
    if (!this.deps.follower || !previousRefresh) return;
    const claims = await this.deps.tokens.verifyRefresh(previousRefresh).catch(() => null);
    const previous = claims ? await this.deps.stores.refresh.byId(this.deps.db, claims.fam) : undefined;
    if (previous?.user_id === userId) await this.deps.follower.carry(previous.id, family);
  }

  /** The family is live and this is its current refresh token: only then is anyone else asked. */
  private async isCurrent(claims: { fam: string; jti: string }): Promise<boolean> {
    const family = await this.deps.stores.refresh.byId(this.deps.db, claims.fam);
    return Boolean(family && !family.revoked_at && constantTimeEqual(family.current_jti_hash, sha256(claims.jti)));
  }

  /** The token family of a refresh token of ours; null for anything else (an expired one included). */
  async familyOf(refreshToken: string): Promise<string | null> {
    const claims = await this.deps.tokens.verifyRefresh(refreshToken).catch(() => null);
    return claims?.fam ?? null;
  }

  /** Sign-out: the refresh token's whole family stops working. An invalid or expired token has nothing left to revoke. */
  async revoke(refreshToken: string): Promise<void> {
    const claims = await this.deps.tokens.verifyRefresh(refreshToken).catch(() => null);
    if (claims) await this.deps.stores.refresh.revoke(this.deps.db, claims.fam, 'signed out');
  }

  /** POST /o/token/ with grant_type=client_credentials. */
  async clientCredentials(
    input: { grant_type?: string; client_id?: string; client_secret?: string; workspace?: string },
    clientAddress: string,
  ): Promise<ClientCredentialsResponse> {
    if (input.grant_type !== 'client_credentials') throw new OAuthError(400, 'unsupported_grant_type', 'Only grant_type=client_credentials is supported.');
    if (!input.client_id || !input.client_secret) throw new OAuthError(400, 'invalid_request', 'client_id and client_secret are required.');
    const pass = await this.deps.guard.admit('oauth', input.client_id, clientAddress);
    const app = await this.deps.stores.oauth.byClientId(this.deps.db, input.client_id);
    const secretOk = app ? constantTimeEqual(app.client_secret_hash, sha256(input.client_secret)) : false;
    if (!app || !secretOk) throw new OAuthError(401, 'invalid_client', 'Client authentication failed.');
    await this.deps.guard.succeeded(pass);
    const workspace = await this.deps.stores.workspaces.liveById(this.deps.db, app.workspace_id);
    if (!workspace || (input.workspace && input.workspace !== workspace.name)) {
      throw new OAuthError(401, 'invalid_client', 'Client authentication failed.');
    }
    if (workspace.disabled) throw new OAuthError(400, 'invalid_grant', 'The workspace of this application is disabled.');
    const permissions = permissionsFor(false, app.role);
    const access = await this.deps.tokens.issueAccess({ userId: app.service_user_id, workspace: { id: workspace.id, name: workspace.name }, permissions });
    return { access_token: access, token_type: 'Bearer', expires_in: this.deps.tokens.accessTtlSeconds, scope: permissions.join(' ') };
  }

  private async subjectFor(db: Runner, userId: number, staff: boolean, workspaceName: string | null): Promise<Subject> {
    if (workspaceName === null) return { userId, workspace: null, permissions: permissionsFor(staff, null) };
    const workspace = await this.deps.stores.workspaces.liveByName(db, workspaceName);
    const membership = workspace ? await this.deps.stores.users.membership(db, userId, workspace.id) : undefined;
    // Same answer for an unknown workspace and a foreign one: existence is not revealed.
    if (!workspace || !membership) throw new NotAllowedError('You are not a member of this workspace.');
    if (workspace.disabled) throw new NotAllowedError('This workspace is disabled.');
    return { userId, workspace: { id: workspace.id, name: workspace.name }, permissions: permissionsFor(staff, membership.role) };
  }

  private async openFamily(subject: Subject): Promise<{ tokens: TokenPair; family: string }> {
    const family = crypto.randomUUID();
    const jti = crypto.randomUUID();
    await this.deps.stores.refresh.create(this.deps.db, {
      id: family,
      user_id: subject.userId,
      workspace_id: subject.workspace?.id ?? null,
      current_jti_hash: sha256(jti),
    });
    const tokens = {
      access: await this.deps.tokens.issueAccess(subject),
      refresh: await this.deps.tokens.issueRefresh(subject, family, jti),
    };
    return { tokens, family };
  }
}
