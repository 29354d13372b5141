import type { Db } from '../../../infra/db/database.js';
import type { SecretBox } from '../../../infra/crypto/secrets.js';
import { NotAuthenticatedError } from '../../../kernel/errors/errors.js';
import type { RefreshFollower } from '../login.service.js';
import type { RefreshStore } from '../refresh.store.js';
import type { UsersStore } from '../users.store.js';
import type { WorkspacesStore } from '../workspaces.store.js';
import { grantsFor } from './grants.js';
import { groupsOf } from './person.js';
import { applyGrants } from './memberships.js';
import { recordGrantChanges } from './audit.js';
import type { AuditTrail } from '../../audit/trail.js';
import type { SsoProviders } from './providers.js';
import type { SsoStore } from './store.js';

export interface FollowerDeps {
  db: Db;
  box: SecretBox;
  stores: { sso: SsoStore; users: UsersStore; workspaces: WorkspacesStore; refresh: RefreshStore };
  providers: SsoProviders;
  audit: AuditTrail;
}

/**
 * Roles follow the provider: each refresh of a token family a single sign-on
 * opened asks the provider again with its refresh token (kept sealed), and
 * sets the person's workspaces and roles from the groups it gets back. A
 * provider that refuses (the person removed or disabled there, their session
 * ended) ends the family, and so does a person no mapping grants anything
 * any longer in a strict connection.
 */
export class SsoRefreshFollower implements RefreshFollower {
  constructor(private readonly deps: FollowerDeps) {}

  /** Keeps the provider's refresh token and ID token for a family the sign-in just opened. */
  async keep(familyId: string, identityId: number, tokens: { refreshToken: string | undefined; idToken: string | undefined }): Promise<void> {
    if (!tokens.refreshToken) return;
    const { box } = this.deps;
    await this.deps.stores.sso.keepFamily(this.deps.db, { familyId, identityId, refreshTokenSealed: box.seal(tokens.refreshToken), idTokenSealed: tokens.idToken ? box.seal(tokens.idToken) : null });
  }

  async follow(familyId: string): Promise<void> {
    const { sso, users } = this.deps.stores;
    const family = await sso.family(this.deps.db, familyId);
    if (!family) return;
    const connection = this.deps.providers.connections.find((c) => c.id === family.connection_id);
    if (!connection) return this.end(familyId, 'The sign-in connection of this session is no longer configured: sign in again.');
    const answer = await this.deps.providers
      .provider(connection)
      .refresh(this.deps.box.open(family.refresh_token_sealed), family.subject)
      .catch((error: unknown) => (error instanceof NotAuthenticatedError ? null : Promise.reject(error)));
    if (!answer) return this.end(familyId, `${connection.displayName} no longer accepts this sign-in: sign in again.`);
    let groups: string[];
    try {
      groups = groupsOf(connection, answer.claims);
    } catch (error) {
      return this.end(familyId, (error as Error).message);
    }
    const grants = grantsFor(connection, groups);
    const changes = await this.deps.db.transaction(async (trx) => {
      const user = await users.byId(trx, family.user_id);
      if (answer.refreshToken) await sso.replaceFamilyTokens(trx, familyId, this.deps.box.seal(answer.refreshToken), answer.idToken ? this.deps.box.seal(answer.idToken) : null);
      return user ? applyGrants(trx, this.deps.stores, user, grants) : [];
    });
    recordGrantChanges(this.deps.audit, family.user_id, changes, { method: 'POST', path: '/api/auth/token/refresh' });
    if (!grants.anything && connection.requireMappedGroup) return this.end(familyId, `None of your groups at ${connection.displayName} gives access to this platform any longer.`);
  }

  async carry(fromFamily: string, toFamily: string): Promise<void> {
    const family = await this.deps.stores.sso.family(this.deps.db, fromFamily);
    if (!family) return;
    await this.deps.stores.sso.keepFamily(this.deps.db, { familyId: toFamily, identityId: family.identity_id, refreshTokenSealed: family.refresh_token_sealed, idTokenSealed: family.id_token_sealed });
  }

  /**
   * Where to send the browser so that the provider ends its own session too
   * (its end_session_endpoint, with the ID token as the hint), or null when
   * the family is no single sign-on's or the provider has no such endpoint.
   */
  async endSessionUrl(familyId: string, postLogoutRedirectUri: string): Promise<string | null> {
    const family = await this.deps.stores.sso.family(this.deps.db, familyId);
    const connection = family && this.deps.providers.connections.find((c) => c.id === family.connection_id);
    if (!family?.id_token_sealed || !connection) return null;
    return this.deps.providers.provider(connection).endSessionUrl(this.deps.box.open(family.id_token_sealed), postLogoutRedirectUri);
  }

  private async end(familyId: string, message: string): Promise<never> {
    await this.deps.stores.refresh.revoke(this.deps.db, familyId, 'identity provider');
    throw new NotAuthenticatedError(message);
  }
}

