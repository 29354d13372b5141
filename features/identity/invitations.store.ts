import type { Runner } from '../../infra/db/database.js';
import { keysetPage, type Page, type PageOfRows } from '../../infra/db/keyset.js';
import type { Role } from '../auth/principal.js';

export interface InvitationRow {
  id: number;
  token_hash: string;
  email: string;
  workspace_id: number;
  role: Role;
  invited_by_id: number | null;
  expires_at: Date;
  accepted_at: Date | null;
  accepted_by_id: number | null;
  revoked_at: Date | null;
  created_at: Date;
}

export type NewInvitation = Pick<InvitationRow, 'token_hash' | 'email' | 'workspace_id' | 'role' | 'invited_by_id' | 'expires_at'>;

/** Every query of `invitations`. */
export interface InvitationsStore {
  insert(db: Runner, invitation: NewInvitation): Promise<InvitationRow>;
  byTokenHash(db: Runner, tokenHash: string): Promise<InvitationRow | undefined>;
  /** The invitation, locked until the transaction ends: it is accepted once. */
  lockByTokenHash(db: Runner, tokenHash: string): Promise<InvitationRow | undefined>;
  /** Open invitations of one e-mail: not accepted, not revoked, not expired, workspace alive. */
  pendingForEmail(db: Runner, email: string, now: Date): Promise<InvitationRow[]>;
  /** A page of the workspace's pending invitations, newest first. */
  pendingInWorkspace(db: Runner, workspaceId: number, now: Date, page: Page): Promise<PageOfRows<InvitationRow>>;
  inWorkspace(db: Runner, workspaceId: number, id: number): Promise<InvitationRow | undefined>;
  markAccepted(db: Runner, ids: number[], userId: number, at: Date): Promise<number>;
  revoke(db: Runner, id: number, at: Date): Promise<number>;
}

const invitations = (db: Runner) => db<InvitationRow>('invitations');

export const invitationsStore: InvitationsStore = {
  insert: async (db, invitation) => (await invitations(db).insert(invitation).returning('*'))[0]!,
  byTokenHash: (db, tokenHash) => invitations(db).where({ token_hash: tokenHash }).first(),
  lockByTokenHash: (db, tokenHash) => invitations(db).where({ token_hash: tokenHash }).forUpdate().first(),
  pendingForEmail: (db, email, now) =>
    invitations(db)
      .where({ email })
      .whereNull('accepted_at')
      .whereNull('revoked_at')
      .where('expires_at', '>', now)
      .whereIn('workspace_id', db('workspaces').select('id').whereNull('deleted_at'))
      .orderBy('id'),
  pendingInWorkspace: (db, workspaceId, now, page) =>
    keysetPage<InvitationRow>(
      invitations(db).where({ workspace_id: workspaceId }).whereNull('accepted_at').whereNull('revoked_at').where('expires_at', '>', now),
      page,
      { table: 'invitations', idType: 'integer' },
    ),
  inWorkspace: (db, workspaceId, id) => invitations(db).where({ id, workspace_id: workspaceId }).first(),
  markAccepted: (db, ids, userId, at) => invitations(db).whereIn('id', ids).whereNull('accepted_at').update({ accepted_at: at, accepted_by_id: userId }),
  revoke: (db, id, at) => invitations(db).where({ id }).whereNull('revoked_at').update({ revoked_at: at }),
};
