import type { OidcConnection, OidcRole } from '../../../kernel/config/oidc.js';

/** What a person's groups give on the platform, under one connection. */
export interface Grants {
  /** Role per workspace name, for every workspace the connection's mappings name (null: no role there). */
  workspaces: Map<string, OidcRole | null>;
  /** Staff or not; undefined when the connection maps no group to staff (staff is then left as it is). */
  staff: boolean | undefined;
  /** Whether any mapping matched. */
  anything: boolean;
}

/** The groups at `path` in the claims: an array of strings, or one string. Anything else is no group. */
export function groupsIn(claims: Record<string, unknown>, path: string[]): string[] {
  let value: unknown = claims;
  for (const key of path) value = value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>)[key] : undefined;
  if (typeof value === 'string') return [value];
  return Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : [];
}

/**
 * The workspaces, roles and staff flag that `groups` give. A workspace named by
 * a mapping but matched by none of the groups gets null: the membership goes,
 * so that leaving a group at the provider takes the role away here.
 */
export function grantsFor(connection: OidcConnection, groups: string[]): Grants {
  const member = new Set(groups);
  const workspaces = new Map<string, OidcRole | null>();
  let anything = false;
  for (const grant of connection.workspaceGrants) {
    const current = workspaces.get(grant.workspace) ?? null;
    if (!member.has(grant.group)) {
      workspaces.set(grant.workspace, current);
      continue;
    }
    anything = true;
    workspaces.set(grant.workspace, current === 'supervisor' || grant.role === 'supervisor' ? 'supervisor' : 'user');
  }
  const staff = connection.staffGroups.length ? connection.staffGroups.some((group) => member.has(group)) : undefined;
  return { workspaces, staff, anything: anything || staff === true };
}

/** Whether the e-mail's domain is one the connection allows (any, when it lists none). */
export function emailAllowed(connection: OidcConnection, email: string): boolean {
  if (!connection.allowedDomains.length) return true;
  const domain = email.slice(email.lastIndexOf('@') + 1).toLowerCase();
  return connection.allowedDomains.includes(domain);
}
