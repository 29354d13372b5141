import type { Runner } from '../../infra/db/database.js';
import type { Role } from '../auth/principal.js';

export interface UserRow {
  id: number;
  email: string;
  password_hash: string | null;
  name: string;
  surname: string;
  preferred_language: string;
  is_staff: boolean;
  is_service: boolean;
  is_active: boolean;
  terms_accepted_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

export interface MembershipRow {
  user_id: number;
  workspace_id: number;
  role: Role;
  created_at: Date;
}

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

/** A member as the members page lists it. */
export interface MemberRow {
  id: number;
  email: string;
  name: string;
  surname: string;
  role: Role;
  created_at: Date;
}

/** A user with one workspace and the user's role in it, as authentication checks them on every request. */
export interface SubjectState {
  id: number;
  email: string;
  is_staff: boolean;
  is_service: boolean;
  is_active: boolean;
  ws_id: number | null;
  ws_name: string | null;
  ws_disabled: boolean | null;
  ws_deleted_at: Date | null;
  role: Role | null;
}

/** Every query of `users` and `memberships`. */
export interface UsersStore {
  byEmail(db: Runner, email: string): Promise<UserRow | undefined>;
  byId(db: Runner, id: number): Promise<UserRow | undefined>;
  insert(db: Runner, user: NewUser): Promise<UserRow>;
  /** Inserts the user unless its e-mail is taken (by a concurrent insert too), then gives back whoever holds it. */
  insertOrFind(db: Runner, user: NewUser): Promise<UserRow>;
  setPassword(db: Runner, id: number, passwordHash: string): Promise<number>;
  /** Makes the user staff with this password, and gives the row back. */
  makeStaff(db: Runner, id: number, passwordHash: string): Promise<UserRow>;
  anyStaff(db: Runner): Promise<boolean>;
  /** Gives or takes staff (single sign-on maps it from the provider's groups). */
  setStaff(db: Runner, id: number, staff: boolean): Promise<number>;
  /** Deletes a service user (an OAuth application's); a person is never deleted. */
  removeServiceUser(db: Runner, id: number): Promise<number>;
  membership(db: Runner, userId: number, workspaceId: number): Promise<MembershipRow | undefined>;
  /** Adds the membership, or changes its role when it exists. */
  upsertMembership(db: Runner, userId: number, workspaceId: number, role: Role): Promise<void>;
  removeMembership(db: Runner, userId: number, workspaceId: number): Promise<number>;
  membersOf(db: Runner, workspaceId: number): Promise<MemberRow[]>;
  /** The user, the workspace (null when none or unknown) and the membership, in one read. */
  subjectState(db: Runner, userId: number, workspaceId: number | null): Promise<SubjectState | undefined>;
}

export const normaliseEmail = (email: string): string => email.trim().toLowerCase();

const users = (db: Runner) => db<UserRow>('users');
const memberships = (db: Runner) => db<MembershipRow>('memberships');

export const usersStore: UsersStore = {
  byEmail: (db, email) => users(db).where({ email: normaliseEmail(email) }).first(),
  byId: (db, id) => users(db).where({ id }).first(),
  insert: async (db, user) => (await users(db).insert({ ...user, email: normaliseEmail(user.email) }).returning('*'))[0]!,
  insertOrFind: async (db, user) => {
    const email = normaliseEmail(user.email);
    const inserted = await users(db).insert({ ...user, email }).onConflict('email').ignore().returning('*');
    return inserted[0] ?? (await users(db).where({ email }).first())!;
  },
  setPassword: (db, id, passwordHash) => users(db).where({ id }).update({ password_hash: passwordHash, updated_at: new Date() }),
  makeStaff: async (db, id, passwordHash) => (await users(db).where({ id }).update({ is_staff: true, password_hash: passwordHash }).returning('*'))[0]!,
  setStaff: (db, id, staff) => users(db).where({ id }).update({ is_staff: staff, updated_at: new Date() }),
  anyStaff: async (db) => Boolean(await users(db).where({ is_staff: true, is_service: false }).first('id')),
  removeServiceUser: (db, id) => users(db).where({ id, is_service: true }).delete(),

  membership: (db, userId, workspaceId) => memberships(db).where({ user_id: userId, workspace_id: workspaceId }).first(),
  upsertMembership: async (db, userId, workspaceId, role) => {
    await memberships(db).insert({ user_id: userId, workspace_id: workspaceId, role }).onConflict(['user_id', 'workspace_id']).merge(['role']);
  },
  removeMembership: (db, userId, workspaceId) => memberships(db).where({ user_id: userId, workspace_id: workspaceId }).delete(),
  membersOf: (db, workspaceId) =>
    db('memberships as m')
      .join('users as u', 'u.id', 'm.user_id')
      .where({ 'm.workspace_id': workspaceId, 'u.is_service': false })
      .select<MemberRow[]>('u.id', 'u.email', 'u.name', 'u.surname', 'm.role', 'm.created_at')
      .orderBy('u.email'),
  subjectState: (db, userId, workspaceId) =>
    db('users as u')
      .leftJoin('workspaces as w', 'w.id', db.raw('?', [workspaceId ?? -1]))
      .leftJoin('memberships as m', (join) => join.on('m.user_id', 'u.id').andOn('m.workspace_id', 'w.id'))
      .where('u.id', userId)
      .first<SubjectState | undefined>(
        'u.id',
        'u.email',
        'u.is_staff',
        'u.is_service',
        'u.is_active',
        'w.id as ws_id',
        'w.name as ws_name',
        'w.disabled as ws_disabled',
        'w.deleted_at as ws_deleted_at',
        'm.role',
      ),
};
