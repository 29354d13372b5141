import type { Runner } from '../../infra/db/database.js';
import { NotAllowedError, NotFoundError } from '../../kernel/errors/errors.js';
import { isStaff, isSupervisor, type Principal } from '../auth/principal.js';
import { workspacesStore } from './workspaces.store.js';

/**
 * The one check for endpoints that name a workspace by id. Staff reach any live
 * workspace; anyone else only the workspace their token is bound to, and a
 * foreign or unknown workspace is a 404 so its existence is never revealed.
 */
export async function requireWorkspaceAccess(db: Runner, principal: Principal, workspaceId: number, need: 'member' | 'supervisor') {
  if (!isStaff(principal)) {
    if (principal.workspace?.id !== workspaceId) throw new NotFoundError('Workspace not found.');
    if (need === 'supervisor' && !isSupervisor(principal)) throw new NotAllowedError('Only a supervisor of this workspace may do this.');
  }
  const workspace = await workspacesStore.liveById(db, workspaceId);
  if (!workspace) throw new NotFoundError('Workspace not found.');
  return workspace;
}
