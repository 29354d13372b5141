import type { Permission } from './tokens.js';

/** A member's role in a workspace. */
export type Role = 'user' | 'supervisor';

export interface Principal {
  user: { id: number; email: string; isStaff: boolean; isService: boolean };
  /** Null for a token obtained without a workspace: it may only list workspaces and verify itself. */
  workspace: { id: number; name: string } | null;
  permissions: Permission[];
  via: 'jwt' | 'api_token';
  /** What `GET /api/auth/token/verify` answers. */
  tokenData: Record<string, unknown>;
}

/**
 * The permission set of a user in a workspace, from its current role. Null:
 * a token bound to no workspace, which carries no permission at all, staff
 * included: it lists the user's workspaces and verifies itself, nothing more.
 */
export function permissionsFor(isStaff: boolean, role: Role | null): Permission[] {
  if (!role) return [];
  const permissions: Permission[] = ['user'];
  if (role === 'supervisor') permissions.push('supervisor');
  if (isStaff) permissions.push('staff');
  return permissions;
}

export const isStaff = (principal: Principal) => principal.permissions.includes('staff');
export const isSupervisor = (principal: Principal) => principal.permissions.includes('supervisor');
