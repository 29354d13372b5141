import type { ApiTokenRow } from './api-tokens.store.js';
import type { InvitationRow } from './invitations.store.js';
import type { OAuthApplicationRow } from './oauth.store.js';
import type { WorkspaceRow } from './workspaces.store.js';

// Database rows → the shapes the API documents. Nothing secret ever passes through here.

const iso = (date: Date | null) => (date ? date.toISOString() : null);

export const presentWorkspace = (w: WorkspaceRow) => ({
  id: w.id,
  name: w.name,
  disabled: w.disabled,
  created_by_id: w.created_by_id,
  created_at: iso(w.created_at),
  updated_at: iso(w.updated_at),
});

export const presentWorkspaceQuota = (w: WorkspaceRow) => ({
  workspace_id: w.id,
  share_weight: w.share_weight,
  max_in_flight: w.max_in_flight,
  max_queued: w.max_queued,
});

export const presentApiToken = (t: ApiTokenRow) => ({
  id: t.id,
  name: t.name,
  user_id: t.user_id,
  expiration_date: t.expiration_date,
  last_used: iso(t.last_used),
  created: iso(t.created),
  is_active: t.is_active,
});

export const presentOAuthApplication = (a: OAuthApplicationRow) => ({
  id: a.id,
  name: a.name,
  client_id: a.client_id,
  role: a.role,
  created_at: iso(a.created_at),
  updated_at: iso(a.updated_at),
});

export const presentInvitation = (i: InvitationRow, workspace: string, invitationUrl?: string) => ({
  id: i.id,
  email: i.email,
  workspace,
  role: i.role,
  expires_at: iso(i.expires_at),
  ...(invitationUrl ? { invitation_url: invitationUrl } : {}),
});
