import type { Db, Tx } from '../../infra/db/database.js';
import type { Role } from '../auth/principal.js';
import { ConflictError, GoneError, InputError, NotAllowedError, NotFoundError } from '../../kernel/errors/errors.js';
import { randomToken, sha256 } from '../../infra/crypto/random.js';
import { hashPassword, passwordProblems } from '../auth/passwords.js';
import { isStaff, type Principal } from '../auth/principal.js';
import type { InvitationRow, InvitationsStore } from './invitations.store.js';
import { normaliseEmail, type UsersStore } from './users.store.js';
import type { WorkspacesStore } from './workspaces.store.js';
import { requireWorkspaceAccess } from './access.js';
import { presentInvitation } from './present.js';
import type { Page } from '../../infra/db/keyset.js';
import type { Mail, Mailer } from '../../infra/mail/mailer.js';

export interface InvitationStores {
  invitations: InvitationsStore;
  users: UsersStore;
  workspaces: WorkspacesStore;
}

export interface InvitationSettings {
  ttlSeconds: number;
  dashboardUrl: string;
}

export interface Registration {
  token: string;
  name: string;
  surname: string;
  password: string;
  preferred_language: string;
  accept_terms: boolean;
  accept_privacy: boolean;
}

const EMAIL = /^[^\s@]{1,64}@[^\s@]{1,255}$/;
const LANGUAGE = /^[a-z]{2,3}(-[A-Za-z0-9]{2,8})?$/;

/** Invitation-only registration: no other path creates a user with a password. */
export class InvitationsService {
  constructor(
    private readonly db: Db,
    private readonly stores: InvitationStores,
    private readonly settings: InvitationSettings,
    private readonly now: () => number = Date.now,
    private readonly mailer?: Mailer,
  ) {}

  async invite(principal: Principal, input: { email: string; role: Role; workspace_id?: number }) {
    const workspaceId = input.workspace_id ?? principal.workspace!.id;
    if (!isStaff(principal) && principal.workspace?.id !== workspaceId) throw new NotFoundError('Workspace not found.');
    const workspace = await requireWorkspaceAccess(this.db, principal, workspaceId, 'supervisor');
    const email = normaliseEmail(input.email);
    if (!EMAIL.test(email)) throw new InputError('email: not an e-mail address.');
    const existing = await this.stores.users.byEmail(this.db, email);
    if (existing && (await this.stores.users.membership(this.db, existing.id, workspaceId))) {
      throw new ConflictError(`${email} is already a member of ${workspace.name}.`);
    }
    const token = randomToken(32);
    const row = await this.stores.invitations.insert(this.db, {
      token_hash: sha256(token),
      email,
      workspace_id: workspaceId,
      role: input.role,
      invited_by_id: principal.user.id,
      expires_at: new Date(this.now() + this.settings.ttlSeconds * 1000),
    });
    const invitationUrl = this.invitationUrl(token);
    const mailSent = this.mailer ? await this.mailer.send(invitationMail(email, workspace.name, input.role, invitationUrl, row.expires_at)) : false;
    return { ...presentInvitation(row, workspace.name, invitationUrl), mail_sent: mailSent };
  }

  invitationUrl(token: string): string {
    return `${this.settings.dashboardUrl}/register?token=${encodeURIComponent(token)}`;
  }

  /** What the registration form shows; no authentication. */
  async describe(token: string) {
    const invitation = await this.stores.invitations.byTokenHash(this.db, sha256(token));
    const workspace = await this.usableWorkspace(invitation);
    const registered = Boolean(await this.stores.users.byEmail(this.db, invitation!.email));
    const pending = await this.stores.invitations.pendingForEmail(this.db, invitation!.email, new Date(this.now()));
    const names = await this.stores.workspaces.liveNames(this.db, pending.map((p) => p.workspace_id));
    return {
      email: invitation!.email,
      workspace: workspace.name,
      role: invitation!.role,
      registered,
      expires_at: invitation!.expires_at.toISOString(),
      workspaces: [...new Set([workspace.name, ...names])],
    };
  }

  /** Creates the user and accepts every open invitation of that e-mail. */
  async register(input: Registration) {
    if (input.accept_terms !== true || input.accept_privacy !== true) {
      throw new InputError('accept_terms and accept_privacy: both must be accepted.');
    }
    const name = input.name.trim();
    const surname = input.surname.trim();
    if (!name || name.length > 100) throw new InputError('name: 1 to 100 characters.');
    if (!surname || surname.length > 100) throw new InputError('surname: 1 to 100 characters.');
    if (!LANGUAGE.test(input.preferred_language)) throw new InputError('preferred_language: expected a language tag such as en or pt-BR.');
    const passwordHash = await this.checkedPasswordHash(input.token, input.password);
    return this.db.transaction(async (trx) => {
      const invitation = await this.stores.invitations.lockByTokenHash(trx, sha256(input.token));
      await this.usableWorkspace(invitation, trx);
      if (await this.stores.users.byEmail(trx, invitation!.email)) {
        throw new ConflictError('This e-mail is already registered: sign in and accept the invitation instead.', 'already_registered');
      }
      const user = await this.stores.users.insert(trx, {
        email: invitation!.email,
        password_hash: passwordHash,
        name,
        surname,
        preferred_language: input.preferred_language,
        terms_accepted_at: new Date(this.now()),
      });
      const pending = await this.stores.invitations.pendingForEmail(trx, invitation!.email, new Date(this.now()));
      const workspaces = await this.acceptAll(trx, pending, user.id);
      return { id: user.id, email: user.email, name: user.name, surname: user.surname, workspaces };
    });
  }

  /** An already registered user joins the invitation's workspace. */
  async accept(principal: Principal, token: string) {
    return this.db.transaction(async (trx) => {
      const invitation = await this.stores.invitations.lockByTokenHash(trx, sha256(token));
      await this.usableWorkspace(invitation, trx);
      if (normaliseEmail(principal.user.email) !== invitation!.email) throw new NotAllowedError('This invitation was sent to another e-mail address.');
      const [accepted] = await this.acceptAll(trx, [invitation!], principal.user.id);
      return accepted!;
    });
  }

  async listPending(principal: Principal, workspaceId: number, page: Page) {
    const workspace = await requireWorkspaceAccess(this.db, principal, workspaceId, 'supervisor');
    const { rows, total, next } = await this.stores.invitations.pendingInWorkspace(this.db, workspaceId, new Date(this.now()), page);
    return { items: rows.map((row) => presentInvitation(row, workspace.name)), total, next };
  }

  async revoke(principal: Principal, workspaceId: number, id: number) {
    await requireWorkspaceAccess(this.db, principal, workspaceId, 'supervisor');
    const row = await this.stores.invitations.inWorkspace(this.db, workspaceId, id);
    if (!row || row.accepted_at || row.revoked_at) throw new NotFoundError('Invitation not found.');
    await this.stores.invitations.revoke(this.db, id, new Date(this.now()));
  }

  private async checkedPasswordHash(token: string, password: string): Promise<string> {
    const invitation = await this.stores.invitations.byTokenHash(this.db, sha256(token));
    await this.usableWorkspace(invitation);
    const problems = passwordProblems(password, invitation!.email);
    if (problems.length) throw new InputError(`password: ${problems.join('; ')}.`, problems.map((problem) => ({ field: 'password', message: problem })));
    return hashPassword(password);
  }

  private async usableWorkspace(invitation: InvitationRow | undefined, db: Db | Tx = this.db) {
    if (!invitation || invitation.revoked_at) throw new NotFoundError('This invitation does not exist or was revoked.');
    if (invitation.accepted_at) throw new GoneError('This invitation has already been used.', 'invitation_used');
    if (invitation.expires_at.getTime() <= this.now()) throw new GoneError('This invitation has expired; ask for a new one.', 'invitation_expired');
    const workspace = await this.stores.workspaces.liveById(db, invitation.workspace_id);
    if (!workspace) throw new GoneError('The workspace of this invitation no longer exists.', 'invitation_expired');
    return workspace;
  }

  private async acceptAll(trx: Tx, invitations: InvitationRow[], userId: number) {
    const accepted: Array<{ workspace: string; role: Role }> = [];
    for (const invitation of invitations) {
      await this.stores.users.upsertMembership(trx, userId, invitation.workspace_id, invitation.role);
      const workspace = await this.stores.workspaces.liveById(trx, invitation.workspace_id);
      if (workspace) accepted.push({ workspace: workspace.name, role: invitation.role });
    }
    await this.stores.invitations.markAccepted(trx, invitations.map((i) => i.id), userId, new Date(this.now()));
    return accepted;
  }

}

function invitationMail(to: string, workspace: string, role: Role, url: string, expiresAt: Date): Mail {
  return {
    to,
    subject: `You are invited to the didyma workspace ${workspace}`,
    text: [
      `You have been invited to join the workspace "${workspace}" on didyma as ${role}.`,
      '',
      `Open this link to accept (it works once, until ${expiresAt.toISOString()}):`,
      url,
      '',
      'If you did not expect this invitation, ignore this message.',
    ].join('\n'),
  };
}
