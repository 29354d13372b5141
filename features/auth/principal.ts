import type { Permission } from './tokens.js';
import type { Role } from '../../infra/db/models.js';

export interface Principal {
  user: { id: number; email: string; isStaff: boolean; isService: boolean };
  /** Null for a token obtained without a workspace: it may only list workspaces and verify itself. */
  workspace: { id: number; name: string } | null;
  permissions: Permission[];
  via: 'jwt' | 'api_token';
  /** What `GET /api/auth/token/verify` answers. */
  tokenData: Record<string, unknown>;
}

/** The permission set of a user in a workspace, from its current role. */
export function permissionsFor(isStaff: boolean, role: Role | null): Permission[] {
  const permissions: Permission[] = [];
  if (role) permissions.push('user');
  if (role === 'supervisor') permissions.push('supervisor');
  if (isStaff) permissions.push('staff');
  return permissions;
}

export const isStaff = (principal: Principal) => principal.permissions.includes('staff');
export const isSupervisor = (principal: Principal) => principal.permissions.includes('supervisor');
