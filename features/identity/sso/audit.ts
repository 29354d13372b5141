import crypto from 'node:crypto';
import type { AuditTrail } from '../../audit/trail.js';
import type { GrantChange } from './memberships.js';

/** The request that made the changes, as the trail names it. */
export interface ChangeOrigin {
  method: string;
  path: string;
}

/**
 * Puts each change the provider's groups made in the audit trail, the person
 * as the actor: `ssoSetRole:<role>` and `ssoRemoveRole` on the workspace,
 * `ssoGrantStaff` and `ssoRevokeStaff` on the user.
 */
export function recordGrantChanges(trail: AuditTrail, userId: number, changes: GrantChange[], origin: ChangeOrigin): void {
  // One id for the changes of one sign-in or refresh, so they read as one event.
  const requestId = crypto.randomUUID();
  for (const change of changes) {
    const onUser = 'staff' in change;
    trail.record({
      actor_type: 'user',
      actor_user_id: userId,
      actor_id: null,
      workspace_id: onUser ? null : change.workspaceId,
      action: onUser ? (change.staff ? 'ssoGrantStaff' : 'ssoRevokeStaff') : change.role ? `ssoSetRole:${change.role}` : 'ssoRemoveRole',
      method: origin.method,
      path: origin.path,
      resource_type: onUser ? 'user' : 'workspace',
      resource_id: String(onUser ? userId : change.workspaceId),
      outcome: 200,
      request_id: requestId,
      trace_id: null,
      source_address: null,
    });
  }
}
