import type { Db } from '../../infra/db/database.js';
import { ConflictError, InputError, NotFoundError } from '../../kernel/errors/errors.js';
import { isStaff, type Principal } from '../auth/principal.js';
import type { Page, WorkspacesStore } from './workspaces.store.js';
import type { RefreshStore } from './refresh.store.js';
import { requireWorkspaceAccess } from './access.js';
import { presentWorkspace } from './present.js';

export const WORKSPACE_NAME = /^[a-z0-9_-]{1,63}$/;

export const LOGO_TYPES: Record<string, (data: Buffer) => boolean> = {
  'image/png': (d) => d.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])),
  'image/jpeg': (d) => d[0] === 0xff && d[1] === 0xd8 && d[2] === 0xff,
  'image/gif': (d) => d.subarray(0, 4).toString('latin1') === 'GIF8',
  'image/webp': (d) => d.subarray(0, 4).toString('latin1') === 'RIFF' && d.subarray(8, 12).toString('latin1') === 'WEBP',
};

export class WorkspacesService {
  constructor(
    private readonly db: Db,
    private readonly stores: { workspaces: WorkspacesStore; refresh: RefreshStore },
  ) {}

  /** Staff see every workspace, anyone else the workspaces they belong to. */
  async list(principal: Principal, page: Page) {
    const { rows, total, next } = await this.stores.workspaces.page(this.db, page, isStaff(principal) ? undefined : principal.user.id);
    return { items: rows.map(presentWorkspace), total, next };
  }

  /** One page of the workspaces the principal is a member of, staff included: where it can sign in. */
  async memberships(principal: Principal, page: Page) {
    return (await this.stores.workspaces.page(this.db, page, principal.user.id)).rows.map(presentWorkspace);
  }

  async create(principal: Principal, input: { name: string; disabled?: boolean }) {
    if (!WORKSPACE_NAME.test(input.name)) {
      throw new InputError('name: only lowercase letters, digits, hyphens and underscores, 1 to 63 characters.');
    }
    return this.db.transaction(async (trx) => {
      if (await this.stores.workspaces.nameTaken(trx, input.name)) throw new ConflictError(`A workspace named "${input.name}" exists or existed.`);
      return presentWorkspace(await this.stores.workspaces.insert(trx, input.name, input.disabled ?? false, principal.user.id));
    });
  }

  async get(id: number) {
    const workspace = await this.stores.workspaces.liveById(this.db, id);
    if (!workspace) throw new NotFoundError('Workspace not found.');
    return presentWorkspace(workspace);
  }

  async setDisabled(id: number, disabled: boolean) {
    const workspace = await this.stores.workspaces.setDisabled(this.db, id, disabled);
    if (!workspace) throw new NotFoundError('Workspace not found.');
    return presentWorkspace(workspace);
  }

  /** Permanent: the row stays only to keep its name reserved; every token of it stops working. */
  async remove(id: number) {
    await this.db.transaction(async (trx) => {
      const deleted = await this.stores.workspaces.markDeleted(trx, id);
      if (!deleted) throw new NotFoundError('Workspace not found.');
      await this.stores.refresh.revokeForWorkspace(trx, id, 'workspace deleted');
    });
  }

  async saveLogo(principal: Principal, workspaceId: number, contentType: string, data: Buffer) {
    await requireWorkspaceAccess(this.db, principal, workspaceId, 'supervisor');
    const looksRight = LOGO_TYPES[contentType];
    if (!looksRight) throw new InputError(`logo: unsupported type ${contentType}; use one of ${Object.keys(LOGO_TYPES).join(', ')}.`);
    if (!looksRight(data)) throw new InputError(`logo: the file content is not ${contentType}.`);
    await this.stores.workspaces.saveLogo(this.db, workspaceId, contentType, data);
  }

  async logo(principal: Principal, workspaceId: number) {
    await requireWorkspaceAccess(this.db, principal, workspaceId, 'member');
    const logo = await this.stores.workspaces.logo(this.db, workspaceId);
    if (!logo) throw new NotFoundError('This workspace has no logo.');
    return logo;
  }
}
