import type { Db } from '../../infra/db/database.js';
import type { Role } from '../auth/principal.js';
import { InputError, NotFoundError } from '../../kernel/errors/errors.js';
import { randomToken, sha256 } from '../../infra/crypto/random.js';
import type { Principal } from '../auth/principal.js';
import type { OAuthStore } from './oauth.store.js';
import type { UsersStore } from './users.store.js';
import { requireWorkspaceAccess } from './access.js';
import { presentOAuthApplication } from './present.js';

/**
 * OAuth applications (service principals). Each owns a service user, member of
 * the application's workspace with the application's role; `/o/token/` issues
 * access tokens for that user. The client secret is shown once, stored hashed.
 */
export class OAuthApplicationsService {
  constructor(
    private readonly db: Db,
    private readonly stores: { oauth: OAuthStore; users: UsersStore },
  ) {}

  async create(principal: Principal | null, workspaceId: number, input: { name: string; role?: Role }) {
    if (principal) await requireWorkspaceAccess(this.db, principal, workspaceId, 'supervisor');
    const name = input.name.trim();
    if (!name || name.length > 100) throw new InputError('name: 1 to 100 characters.');
    const role = input.role ?? 'user';
    const clientId = randomToken(18);
    const clientSecret = randomToken(32);
    const app = await this.db.transaction(async (trx) => {
      const serviceUser = await this.stores.users.insert(trx, {
        email: `service-${clientId.toLowerCase()}@oauth.didyma.invalid`,
        password_hash: null,
        name,
        is_service: true,
      });
      await this.stores.users.upsertMembership(trx, serviceUser.id, workspaceId, role);
      return this.stores.oauth.insert(trx, {
        name,
        workspace_id: workspaceId,
        client_id: clientId,
        client_secret_hash: sha256(clientSecret),
        service_user_id: serviceUser.id,
        role,
        created_by_id: principal?.user.id ?? null,
      });
    });
    return { client_id: clientId, client_secret: clientSecret, application: presentOAuthApplication(app) };
  }

  async list(principal: Principal, workspaceId: number) {
    await requireWorkspaceAccess(this.db, principal, workspaceId, 'supervisor');
    return (await this.stores.oauth.listInWorkspace(this.db, workspaceId)).map(presentOAuthApplication);
  }

  async rotateSecret(principal: Principal, workspaceId: number, id: number) {
    await requireWorkspaceAccess(this.db, principal, workspaceId, 'supervisor');
    const app = await this.stores.oauth.inWorkspace(this.db, workspaceId, id);
    if (!app) throw new NotFoundError('OAuth application not found.');
    const clientSecret = randomToken(32);
    await this.stores.oauth.setSecret(this.db, app.id, sha256(clientSecret));
    return { client_id: app.client_id, client_secret: clientSecret };
  }

  /** Deleting the application deletes its service user, so its tokens stop at once. */
  async remove(principal: Principal, workspaceId: number, id: number) {
    await requireWorkspaceAccess(this.db, principal, workspaceId, 'supervisor');
    await this.db.transaction(async (trx) => {
      const app = await this.stores.oauth.inWorkspace(trx, workspaceId, id);
      if (!app) throw new NotFoundError('OAuth application not found.');
      await this.stores.oauth.remove(trx, app.id);
      await this.stores.users.removeServiceUser(trx, app.service_user_id);
    });
  }
}
