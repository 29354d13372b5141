import type { Runner } from '../../infra/db/database.js';
import { InvitationRow } from '../../infra/db/models.js';
import { keysetPage, type Page } from '../../infra/db/keyset.js';

export const invitationsStore = {
  insert: (db: Runner, invitation: Pick<InvitationRow, 'token_hash' | 'email' | 'workspace_id' | 'role' | 'invited_by_id' | 'expires_at'>) =>
    InvitationRow.query(db).insert(invitation).returning('*'),
  byTokenHash: (db: Runner, tokenHash: string) => InvitationRow.query(db).findOne({ token_hash: tokenHash }),
  lockByTokenHash: (db: Runner, tokenHash: string) => InvitationRow.query(db).findOne({ token_hash: tokenHash }).forUpdate(),
  /** Open invitations of one e-mail: not accepted, not revoked, not expired, workspace alive. */
  pendingForEmail: (db: Runner, email: string, now: Date) =>
    InvitationRow.query(db)
      .where({ email })
      .whereNull('accepted_at')
      .whereNull('revoked_at')
      .where('expires_at', '>', now)
      .whereIn('workspace_id', db('workspaces').select('id').whereNull('deleted_at'))
      .orderBy('id'),
  /** A page of the workspace's pending invitations, newest first. */
  pendingInWorkspace: (db: Runner, workspaceId: number, now: Date, page: Page) =>
    keysetPage<InvitationRow>(
      db('invitations').where({ workspace_id: workspaceId }).whereNull('accepted_at').whereNull('revoked_at').where('expires_at', '>', now),
      page,
      { table: 'invitations', idType: 'integer' },
    ),
  inWorkspace: (db: Runner, workspaceId: number, id: number) => InvitationRow.query(db).findOne({ id, workspace_id: workspaceId }),
  markAccepted: (db: Runner, ids: number[], userId: number, at: Date) =>
    InvitationRow.query(db).patch({ accepted_at: at, accepted_by_id: userId }).whereIn('id', ids).whereNull('accepted_at'),
  revoke: (db: Runner, id: number, at: Date) => InvitationRow.query(db).patch({ revoked_at: at }).where({ id }).whereNull('revoked_at'),
};
