import type { Runner } from '../../infra/db/database.js';
import { MembershipRow, UserRow, type Role } from '../../infra/db/models.js';

export interface NewUser {
  email: string;
  password_hash: string | null;
  name?: string;
  surname?: string;
  preferred_language?: string;
  is_staff?: boolean;
  is_service?: boolean;
  terms_accepted_at?: Date | null;
}

export const normaliseEmail = (email: string): string => email.trim().toLowerCase();

export const usersStore = {
  byEmail: (db: Runner, email: string) => UserRow.query(db).findOne({ email: normaliseEmail(email) }),
  byId: (db: Runner, id: number) => UserRow.query(db).findById(id),
  insert: (db: Runner, user: NewUser) => UserRow.query(db).insert({ ...user, email: normaliseEmail(user.email) }).returning('*'),
  setPassword: (db: Runner, id: number, passwordHash: string) =>
    UserRow.query(db).patch({ password_hash: passwordHash, updated_at: new Date() }).where({ id }),
  anyStaff: async (db: Runner) => Boolean(await UserRow.query(db).findOne({ is_staff: true, is_service: false })),

  membership: (db: Runner, userId: number, workspaceId: number) =>
    MembershipRow.query(db).findOne({ user_id: userId, workspace_id: workspaceId }),
  /** Adds the membership, or changes its role when it exists. */
  upsertMembership: (db: Runner, userId: number, workspaceId: number, role: Role) =>
    MembershipRow.query(db)
      .insert({ user_id: userId, workspace_id: workspaceId, role })
      .onConflict(['user_id', 'workspace_id'])
      .merge(['role']),
  removeMembership: (db: Runner, userId: number, workspaceId: number) =>
    MembershipRow.query(db).delete().where({ user_id: userId, workspace_id: workspaceId }),
  membersOf: (db: Runner, workspaceId: number) =>
    db('memberships as m')
      .join('users as u', 'u.id', 'm.user_id')
      .where({ 'm.workspace_id': workspaceId, 'u.is_service': false })
      .select('u.id', 'u.email', 'u.name', 'u.surname', 'm.role', 'm.created_at')
      .orderBy('u.email') as Promise<Array<{ id: number; email: string; name: string; surname: string; role: Role; created_at: Date }>>,
};
