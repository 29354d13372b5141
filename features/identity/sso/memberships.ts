import type { Runner } from '../../../infra/db/database.js';
import type { Role } from '../../auth/principal.js';
import type { UserRow, UsersStore } from '../users.store.js';
import type { WorkspacesStore } from '../workspaces.store.js';
import type { Grants } from './grants.js';

/** One change the groups made: a membership set or removed, or staff given or taken. */
export type GrantChange = { workspaceId: number; role: Role | null } | { staff: boolean };

/**
 * Sets the user's memberships of every workspace the grants name to what
 * they give, removals included, and staff when the grants decide it; returns
 * what changed. A mapped workspace that does not exist (yet, or any longer)
 * is skipped.
 */
export async function applyGrants(trx: Runner, stores: { users: UsersStore; workspaces: WorkspacesStore }, user: UserRow, grants: Grants): Promise<GrantChange[]> {
  const changes: GrantChange[] = [];
  for (const [name, role] of grants.workspaces) {
    const workspace = await stores.workspaces.liveByName(trx, name);
    if (!workspace) continue;
    const current = (await stores.users.membership(trx, user.id, workspace.id))?.role ?? null;
    if (current === role) continue;
    if (role) await stores.users.upsertMembership(trx, user.id, workspace.id, role);
    else await stores.users.removeMembership(trx, user.id, workspace.id);
    changes.push({ workspaceId: workspace.id, role });
  }
  if (grants.staff !== undefined && grants.staff !== user.is_staff) {
    await stores.users.setStaff(trx, user.id, grants.staff);
    changes.push({ staff: grants.staff });
  }
  return changes;
}
