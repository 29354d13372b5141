import type { Db } from '../../infra/db/database.js';
import { ConflictError, InputError, NotFoundError, type ErrorDetail } from '../../kernel/errors/errors.js';
import { isStaff, type Principal } from '../auth/principal.js';
import type { Page, WorkspaceQuota, WorkspacesStore } from './workspaces.store.js';
import type { RefreshStore } from './refresh.store.js';
import { requireWorkspaceAccess } from './access.js';
import { presentWorkspace, presentWorkspaceQuota } from './present.js';

export const WORKSPACE_NAME = /^[a-z0-9_-]{1,63}$/;

export const LOGO_TYPES: Record<string, (data: Buffer) => boolean> = {
  'image/png': (d) => d.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])),
  'image/jpeg': (d) => d[0] === 0xff && d[1] === 0xd8 && d[2] === 0xff,
  'image/gif': (d) => d.subarray(0, 4).toString('latin1') === 'GIF8',
  'image/webp': (d) => d.subarray(0, 4).toString('latin1') === 'RIFF' && d.subarray(8, 12).toString('latin1') === 'WEBP',
};

/** The bounds of each quota field; the database's check constraints say the same. */
export const QUOTA_LIMITS = {
  share_weight: { min: 1, max: 1000, nullable: false },
  max_in_flight: { min: 1, max: 2147483647, nullable: true },
  max_queued: { min: 1, max: 2147483647, nullable: true },
} as const;

/** A change of quota as sent: each field optional; null clears a limit. */
export type QuotaChange = { [K in keyof WorkspaceQuota]?: WorkspaceQuota[K] | null };

/** Every problem of a quota change, one detail per field (the dashboard's forms reach the service without the OpenAPI layer). */
export function quotaProblems(change: QuotaChange): ErrorDetail[] {
  const problems: ErrorDetail[] = [];
  for (const [field, limits] of Object.entries(QUOTA_LIMITS)) {
    const value = change[field as keyof QuotaChange];
    if (value === undefined || (value === null && limits.nullable)) continue;
    if (value === null || !Number.isInteger(value) || value < limits.min || value > limits.max) {
      const range = limits.nullable ? `of at least ${limits.min}, or null for no limit` : `from ${limits.min} to ${limits.max}`;
      problems.push({ field, message: `${field}: a whole number ${range}.` });
    }
  }
  return problems;
}

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

  /** Staff, or a supervisor of this workspace (reading only). */
  async quota(principal: Principal, id: number) {
    return presentWorkspaceQuota(await requireWorkspaceAccess(this.db, principal, id, 'supervisor'));
  }

  /** Staff only (the route's guard): changes the fields given, null clearing a limit; the next claim obeys it. */
  async setQuota(id: number, change: QuotaChange) {
    const problems = quotaProblems(change);
    if (problems.length) throw new InputError(problems.map((p) => p.message).join(' '), problems);
    const known = Object.fromEntries(Object.keys(QUOTA_LIMITS).filter((k) => change[k as keyof QuotaChange] !== undefined).map((k) => [k, change[k as keyof QuotaChange]]));
    if (!Object.keys(known).length) throw new InputError(`Give at least one of ${Object.keys(QUOTA_LIMITS).join(', ')}.`);
    const workspace = await this.stores.workspaces.setQuota(this.db, id, known as Partial<WorkspaceQuota>);
    if (!workspace) throw new NotFoundError('Workspace not found.');
    return presentWorkspaceQuota(workspace);
  }

  /** Staff: the quota of each workspace listed, by id (the dashboard's table). */
  quotas(ids: number[]) {
    return this.stores.workspaces.quotas(this.db, ids);
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
