import type { Db } from '../../infra/db/database.js';
import type { Role } from '../auth/principal.js';
import { ConflictError, InputError, NotFoundError } from '../../kernel/errors/errors.js';
import { randomToken } from '../../infra/crypto/random.js';
import { hashPassword, passwordProblems } from '../auth/passwords.js';
import { usersStore } from './users.store.js';
import { refreshStore } from './refresh.store.js';
import { workspacesStore } from './workspaces.store.js';
import { WORKSPACE_NAME } from './workspaces.service.js';

// Operator commands (`didyma admin …`) and the first-start bootstrap.

export async function createUser(db: Db, input: { email: string; password: string; staff?: boolean; name?: string; surname?: string }) {
  const problems = passwordProblems(input.password, input.email);
  if (problems.length) throw new InputError(`password: ${problems.join('; ')}.`);
  if (await usersStore.byEmail(db, input.email)) throw new ConflictError(`A user ${input.email} exists.`);
  return usersStore.insert(db, {
    email: input.email,
    password_hash: await hashPassword(input.password),
    is_staff: input.staff ?? false,
    name: input.name ?? '',
    surname: input.surname ?? '',
  });
}

export async function createWorkspace(db: Db, name: string, createdById: number | null = null) {
  if (!WORKSPACE_NAME.test(name)) throw new InputError('name: only lowercase letters, digits, hyphens and underscores, 1 to 63 characters.');
  if (await workspacesStore.nameTaken(db, name)) throw new ConflictError(`A workspace named "${name}" exists or existed.`);
  return workspacesStore.insert(db, name, false, createdById);
}

export async function addMember(db: Db, email: string, workspaceName: string, role: Role) {
  const user = await usersStore.byEmail(db, email);
  if (!user) throw new NotFoundError(`No user ${email}.`);
  const workspace = await workspacesStore.liveByName(db, workspaceName);
  if (!workspace) throw new NotFoundError(`No workspace ${workspaceName}.`);
  await usersStore.upsertMembership(db, user.id, workspace.id, role);
  return { user, workspace };
}

/** A password that passes the password rules, for an operator to hand on. */
export function generatePassword(): string {
  return `${randomToken(12)}-Mp1`;
}

/**
 * Gives a user a new password (an operator's `didyma admin reset-password`)
 * and ends every sign-in of theirs: whoever knew the old one is logged out.
 * API tokens, separate credentials, stay as they are.
 */
export async function resetPassword(db: Db, email: string, password: string): Promise<{ email: string; signedOut: number }> {
  const problems = passwordProblems(password, email);
  if (problems.length) throw new InputError(`password: ${problems.join('; ')}.`);
  const passwordHash = await hashPassword(password);
  return db.transaction(async (trx) => {
    const user = await usersStore.byEmail(trx, email);
    if (!user || user.is_service) throw new NotFoundError(`No user ${email}.`);
    await usersStore.setPassword(trx, user.id, passwordHash);
    return { email: user.email, signedOut: await refreshStore.revokeForUser(trx, user.id, 'password reset') };
  });
}

export interface BootstrapResult {
  created: boolean;
  email: string;
  /** Set only when the password was generated: printed once, never stored in clear. */
  generatedPassword?: string;
  workspace: string;
}

/**
 * When no staff user exists: a staff user from the configured e-mail and
 * password (or a generated password) and a workspace `default` in which that
 * user is supervisor. Does nothing on later starts.
 */
export async function bootstrap(db: Db, email: string, password: string | undefined): Promise<BootstrapResult> {
  return db.transaction(async (trx) => {
    await trx.raw('select pg_advisory_xact_lock(7242001)');
    if (await usersStore.anyStaff(trx)) return { created: false, email, workspace: 'default' };
    const generatedPassword = password ? undefined : generatePassword();
    const secret = password ?? generatedPassword!;
    const problems = passwordProblems(secret, email);
    if (problems.length) throw new InputError(`DIDYMA_ADMIN_PASSWORD: ${problems.join('; ')}.`);
    const existing = await usersStore.byEmail(trx, email);
    const user = existing
      ? await usersStore.makeStaff(trx, existing.id, await hashPassword(secret))
      : await usersStore.insert(trx, { email, password_hash: await hashPassword(secret), is_staff: true, name: 'Admin' });
    const workspace = (await workspacesStore.liveByName(trx, 'default')) ?? (await workspacesStore.insert(trx, 'default', false, user.id));
    await usersStore.upsertMembership(trx, user.id, workspace.id, 'supervisor');
    return { created: true, email, generatedPassword, workspace: workspace.name };
  });
}
