import type { Db, Runner } from '../../../infra/db/database.js';
import type { SecretBox } from '../../../infra/crypto/secrets.js';
import { sha256 } from '../../../infra/crypto/random.js';
import type { PendingChecks, ProviderSignIn } from '../../../infra/oidc/provider.js';
import type { OidcConnection } from '../../../kernel/config/oidc.js';
import { InputError, NotAllowedError, NotAuthenticatedError } from '../../../kernel/errors/errors.js';
import type { LoginService, SignedIn, TokenPair } from '../login.service.js';
import { AppCodes, type AppRequest, type SignInGrant } from './apps.js';
import type { UserRow, UsersStore } from '../users.store.js';
import type { WorkspacesStore } from '../workspaces.store.js';
import { emailAllowed, grantsFor, type Grants } from './grants.js';
import { personOf, type ProviderPerson } from './person.js';
import type { SsoStore } from './store.js';
import { applyGrants } from './memberships.js';
import { recordGrantChanges } from './audit.js';
import type { AuditTrail } from '../../audit/trail.js';
import type { SsoProviders } from './providers.js';
import type { SsoRefreshFollower } from './follower.js';
import { SIGN_IN_TTL_SECONDS, type SignInStarts } from './starts.js';
import { DeviceSignIns, type DeviceSignInStart } from './device.js';

export interface SsoDeps {
  db: Db;
  box: SecretBox;
  stores: { sso: SsoStore; users: UsersStore; workspaces: WorkspacesStore };
  login: LoginService;
  audit: AuditTrail;
  providers: SsoProviders;
  follower: SsoRefreshFollower;
  /** The bound on the unfinished starts of each source. */
  starts: SignInStarts;
  /** The dashboard's public URL: the providers send the browser back under it. */
  dashboardUrl: string;
  now: () => number;
}


/** A connection as the sign-in page lists it: never its client id or secret. */
export interface ConnectionSummary {
  id: string;
  display_name: string;
}

/** A connection as the staff API shows it (the OpenAPI schema SsoConnection). */
export interface SsoConnectionView {
  id: string;
  display_name: string;
  issuer: string;
  client_id: string;
  has_client_secret: boolean;
  scopes: string[];
  groups_claim: string;
  workspace_roles: Array<{ group: string; workspace: string; role: string }>;
  staff_groups: string[];
  allowed_email_domains: string[];
  create_users: boolean;
  require_mapped_group: boolean;
}

/**
 * Single sign-on through the configured OpenID Providers. The provider only
 * authenticates the person: didyma then links them by (issuer, subject),
 * recomputes their workspaces and roles from their groups (removals
 * included) and issues its own tokens, as after a password sign-in.
 */
export class SsoService {
  private readonly appCodes: AppCodes;
  private readonly devices: DeviceSignIns;

  constructor(private readonly deps: SsoDeps) {
    this.appCodes = new AppCodes({ db: deps.db, box: deps.box, sso: deps.stores.sso, now: deps.now });
    this.devices = new DeviceSignIns({ db: deps.db, box: deps.box, sso: deps.stores.sso, starts: deps.starts, now: deps.now });
  }

  list(): ConnectionSummary[] {
    return this.deps.providers.connections.map((c) => ({ id: c.id, display_name: c.displayName }));
  }

  /** Every connection as staff read it: all but the client secret. */
  describe(): SsoConnectionView[] {
    return this.deps.providers.connections.map((c) => ({
      id: c.id,
      display_name: c.displayName,
      issuer: c.issuer,
      client_id: c.clientId,
      has_client_secret: c.clientSecret !== undefined,
      scopes: c.scopes,
      groups_claim: c.groupsClaim.join('.'),
      workspace_roles: c.workspaceGrants.map(({ group, workspace, role }) => ({ group, workspace, role })),
      staff_groups: c.staffGroups,
      allowed_email_domains: c.allowedDomains,
      create_users: c.createUsers,
      require_mapped_group: c.requireMappedGroup,
    }));
  }

  /** Where the provider sends the browser back to for this connection. */
  redirectUri(connectionId: string): string {
    return `${this.deps.dashboardUrl}/sso/${encodeURIComponent(connectionId)}/callback`;
  }

  /**
   * Starts a sign-in from `clientAddress`: the provider's authorization URL,
   * its checks kept here, bound to the browser that asked; for a native app,
   * with its request. A source may hold only so many unfinished starts (429).
   */
  async begin(connectionId: string, browser: string, returnTo: string | null, app: AppRequest | undefined, clientAddress: string): Promise<string> {
    const connection = this.connection(connectionId);
    const start = await this.deps.starts.count(clientAddress);
    try {
      const { url, checks } = await this.provider(connection).authorizationRequest(this.redirectUri(connection.id));
      const now = this.deps.now();
      await this.deps.stores.sso.removeExpiredSignIns(this.deps.db, new Date(now));
      await this.deps.stores.sso.startSignIn(this.deps.db, {
        state_hash: sha256(checks.state),
        connection_id: connection.id,
        browser_hash: sha256(browser),
        secrets_sealed: this.deps.box.sealJson({ nonce: checks.nonce, codeVerifier: checks.codeVerifier }),
        return_to: returnTo,
        app_redirect_uri: app?.redirectUri ?? null,
        app_code_challenge: app?.codeChallenge ?? null,
        app_state: app?.state ?? null,
        source_key_hash: start.keyHash,
        source_window_ends: start.resetAt,
        expires_at: new Date(now + SIGN_IN_TTL_SECONDS * 1000),
      });
      return url;
    } catch (error) {
      await this.deps.starts.takeBack(start);
      throw error;
    }
  }

  /**
   * Where to send the browser after signing out the session of this refresh
   * token, so that the provider's session ends too; null when there is none
   * to end, or the provider cannot be reached (didyma's sign-out goes on).
   */
  async providerLogoutUrl(refreshToken: string): Promise<string | null> {
    const family = await this.deps.login.familyOf(refreshToken);
    if (!family) return null;
    return this.deps.follower.endSessionUrl(family, `${this.deps.dashboardUrl}/sign-in`).catch(() => null);
  }

  /** Completes a sign-in from the provider's redirect (its query in `callbackQuery`), in the browser that started it. */
  async complete(connectionId: string, callbackQuery: URLSearchParams, browser: string | undefined): Promise<{ grant: SignInGrant; returnTo: string | null; app: AppRequest | undefined }> {
    const connection = this.connection(connectionId);
    const { checks, returnTo, app } = await this.takeSignIn(connection, callbackQuery, browser);
    const callbackUrl = new URL(this.redirectUri(connection.id));
    callbackUrl.search = callbackQuery.toString();
    const answer = await this.provider(connection).redeem(callbackUrl, checks);
    const grant = await this.admit(connection, answer, { method: 'GET', path: new URL(this.redirectUri(connection.id)).pathname });
    return { grant, returnTo, app };
  }

  /**
   * POST /api/auth/sso/device: starts a device sign-in (RFC 8628) at the
   * connection's provider. The one entry of anonymous device starts, so that
   * a cap on them wraps this function.
   */
  async beginDeviceSignIn(connectionId: string, clientAddress: string): Promise<DeviceSignInStart> {
    const connection = this.connection(connectionId);
    const counted = await this.deps.starts.count(clientAddress);
    try {
      return await this.devices.start(connection.id, await this.provider(connection).deviceAuthorization(), counted);
    } catch (error) {
      await this.deps.starts.takeBack(counted);
      throw error;
    }
  }

  /** POST /api/auth/sso/device/token: one poll of a device sign-in; once the person is done, its tokens (in `workspace`, if given). */
  async pollDeviceSignIn(input: { handle: string; workspace?: string }): Promise<SignedIn> {
    const { connectionId, signIn } = await this.devices.poll(input.handle, (id, device) => this.provider(this.connection(id)).pollDevice(device));
    const grant = await this.admit(this.connection(connectionId), signIn, { method: 'POST', path: '/api/auth/sso/device/token' });
    return this.issue(grant, input.workspace ?? null);
  }

  /**
   * The person of a provider's verified answer, admitted as every flow does:
   * e-mail domain, link by (issuer, subject), workspaces and roles from the
   * groups (removals included, each change audited as `request`), strict mode.
   */
  private async admit(connection: OidcConnection, answer: ProviderSignIn, request: { method: string; path: string }): Promise<SignInGrant> {
    const person = personOf(connection, answer.claims);
    if (!emailAllowed(connection, person.email)) throw new NotAllowedError(`The e-mail domain of ${person.email} is not allowed to sign in through ${connection.displayName}.`);
    const grants = grantsFor(connection, person.groups);
    const found = await this.deps.db.transaction(async (trx) => {
      const linked = await this.userOf(trx, connection, person, grants);
      return linked && { ...linked, changes: await applyGrants(trx, this.deps.stores, linked.user, grants) };
    });
    if (found) recordGrantChanges(this.deps.audit, found.user.id, found.changes, request);
    if (!grants.anything && connection.requireMappedGroup) throw new NotAllowedError(`None of your groups at ${connection.displayName} gives access to this platform.`);
    if (!found) throw new NotAllowedError(`No account exists for ${person.email}, and ${connection.displayName} does not create accounts: ask a supervisor for an invitation.`);
    return { userId: found.user.id, identityId: found.identityId, refreshToken: answer.refreshToken, idToken: answer.idToken };
  }

  /** The tokens of a completed sign-in: a token family of didyma's (in `workspace`, if given), following the provider. */
  async issue(grant: SignInGrant, workspace: string | null = null): Promise<SignedIn> {
    const signedIn = await this.deps.login.signInVerified(grant.userId, workspace);
    await this.deps.follower.keep(signedIn.family, grant.identityId, grant);
    return signedIn;
  }

  /** Where the browser goes back to the native app that started the sign-in, with a one-time code for its tokens. */
  appReturn(app: AppRequest, grant: SignInGrant): Promise<string> {
    return this.appCodes.issue(app, grant);
  }

  /** POST /api/auth/sso/token: the tokens of the code's sign-in, in the workspace asked for. */
  async redeemAppCode(input: { code: string; code_verifier: string; redirect_uri: string; workspace?: string }): Promise<TokenPair> {
    return (await this.issue(await this.appCodes.redeem(input), input.workspace ?? null)).tokens;
  }

  private async takeSignIn(connection: OidcConnection, query: URLSearchParams, browser: string | undefined): Promise<{ checks: PendingChecks; returnTo: string | null; app: AppRequest | undefined }> {
    const state = query.get('state');
    if (!state) throw new InputError('The identity provider sent the browser back without a state: start the sign-in again.');
    const row = await this.deps.stores.sso.takeSignIn(this.deps.db, sha256(state), new Date(this.deps.now()));
    if (row?.source_key_hash && row.source_window_ends) await this.deps.starts.takeBack({ keyHash: row.source_key_hash, resetAt: new Date(row.source_window_ends) });
    if (!row || row.connection_id !== connection.id) throw new InputError('This sign-in has expired or was already completed: start it again.');
    if (!browser || sha256(browser) !== row.browser_hash) throw new InputError('This sign-in was started in another browser: start it again here.');
    const { nonce, codeVerifier } = this.deps.box.openJson(row.secrets_sealed);
    const app = row.app_redirect_uri ? { redirectUri: row.app_redirect_uri, codeChallenge: row.app_code_challenge ?? '', state: row.app_state ?? '' } : undefined;
    return { checks: { state, nonce: nonce ?? '', codeVerifier: codeVerifier ?? '' }, returnTo: row.return_to, app };
  }

  /** The linked user; else the user of that e-mail, linked now; else a new one when the connection creates users. */
  private async userOf(trx: Runner, connection: OidcConnection, person: ProviderPerson, grants: Grants): Promise<{ user: UserRow; identityId: number } | undefined> {
    const { sso, users } = this.deps.stores;
    const linked = await sso.identity(trx, person.issuer, person.subject);
    let user = linked ? await users.byId(trx, linked.user_id) : await users.byEmail(trx, person.email);
    if (linked) await sso.touch(trx, linked.id, person.email, new Date(this.deps.now()));
    if (!user && connection.createUsers && (grants.anything || !connection.requireMappedGroup)) {
      // Two first sign-ins of one person at once: the second takes the user the first created.
      user = await users.insertOrFind(trx, { email: person.email, password_hash: null, name: person.name, surname: person.surname });
    }
    if (!user) return undefined;
    if (!user.is_active || user.is_service) throw new NotAuthenticatedError('This account is not active.');
    const identityId = linked?.id ?? (await sso.link(trx, { issuer: person.issuer, subject: person.subject, connection_id: connection.id, user_id: user.id, email: person.email }));
    return { user, identityId };
  }

  private connection(id: string): OidcConnection {
    return this.deps.providers.connection(id);
  }

  private provider(connection: OidcConnection) {
    return this.deps.providers.provider(connection);
  }
}
