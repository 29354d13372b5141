import type { Runner } from '../../../infra/db/database.js';
import type { UserRow, UsersStore } from '../users.store.js';
import type { WorkspacesStore } from '../workspaces.store.js';
import type { Grants } from './grants.js';

/**
 * Sets the user's memberships of every workspace the grants name to what
 * they give, removals included, and staff when the grants decide it. A
 * mapped workspace that does not exist (yet, or any longer) is skipped.
 */
export async function applyGrants(trx: Runner, stores: { users: UsersStore; workspaces: WorkspacesStore }, user: UserRow, grants: Grants): Promise<void> {
  for (const [name, role] of grants.workspaces) {
    const workspace = await stores.workspaces.liveByName(trx, name);
    if (!workspace) continue;
    if (role) await stores.users.upsertMembership(trx, user.id, workspace.id, role);
    else await stores.users.removeMembership(trx, user.id, workspace.id);
  }
  if (grants.staff !== undefined && grants.staff !== user.is_staff) await stores.users.setStaff(trx, user.id, grants.staff);
}
