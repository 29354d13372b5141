import type { Db } from '../../infra/db/database.js';
import type { Principal } from '../auth/principal.js';
import type { UsersStore } from './users.store.js';
import { requireWorkspaceAccess } from './access.js';

/** Who belongs to a workspace (people only: service users of OAuth applications are listed with their applications). */
export class MembersService {
  constructor(
    private readonly db: Db,
    private readonly stores: { users: Pick<UsersStore, 'membersOf'> },
  ) {}

  async list(principal: Principal, workspaceId: number) {
    await requireWorkspaceAccess(this.db, principal, workspaceId, 'supervisor');
    const rows = await this.stores.users.membersOf(this.db, workspaceId);
    return rows.map((row) => ({ id: row.id, email: row.email, name: row.name, surname: row.surname, role: row.role, since: row.created_at.toISOString() }));
  }
}
