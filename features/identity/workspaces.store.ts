import type { Runner } from '../../infra/db/database.js';
import { keysetPage, type Page, type PageOfRows } from '../../infra/db/keyset.js';

export type { Page } from '../../infra/db/keyset.js';

export interface WorkspaceRow {
  id: number;
  name: string;
  disabled: boolean;
  created_by_id: number | null;
  created_at: Date;
  updated_at: Date;
  deleted_at: Date | null;
  /** Its share of the executors against other workspaces with queued work, 1 to 1000. */
  share_weight: number;
  /** Model calls at once across executors; null: no limit. */
  max_in_flight: number | null;
  /** Invocations queued at once (more: 429); null: no limit. */
  max_queued: number | null;
}

/** How a workspace shares the executors: what staff set (features/invocations/state.ts reads it at claim and append). */
export type WorkspaceQuota = Pick<WorkspaceRow, 'share_weight' | 'max_in_flight' | 'max_queued'>;

export interface WorkspaceLogoRow {
  workspace_id: number;
  content_type: string;
  data: Buffer;
  updated_at: Date;
}

/** Every query of `workspaces` and `workspace_logos`. */
export interface WorkspacesStore {
  liveById(db: Runner, id: number): Promise<WorkspaceRow | undefined>;
  liveByName(db: Runner, name: string): Promise<WorkspaceRow | undefined>;
  /** The names of these live workspaces, in id order. */
  liveNames(db: Runner, ids: number[]): Promise<string[]>;
  /** A workspace's name, deleted or not: names are never reused, so a name read once stays right. */
  nameById(db: Runner, id: number): Promise<string | undefined>;
  /** Any workspace, deleted ones included: names stay reserved forever. */
  nameTaken(db: Runner, name: string): Promise<boolean>;
  insert(db: Runner, name: string, disabled: boolean, createdById: number | null): Promise<WorkspaceRow>;
  setDisabled(db: Runner, id: number, disabled: boolean): Promise<WorkspaceRow | undefined>;
  markDeleted(db: Runner, id: number): Promise<number>;
  /** Changes only the fields given; undefined when the workspace is not live. */
  setQuota(db: Runner, id: number, quota: Partial<WorkspaceQuota>): Promise<WorkspaceRow | undefined>;
  /** The quota of each of these live workspaces, by id. */
  quotas(db: Runner, ids: number[]): Promise<Map<number, WorkspaceQuota>>;
  /** A page of every live workspace (no user), or of those the user belongs to, newest first. */
  page(db: Runner, page: Page, userId?: number): Promise<PageOfRows<WorkspaceRow>>;
  logo(db: Runner, workspaceId: number): Promise<WorkspaceLogoRow | undefined>;
  saveLogo(db: Runner, workspaceId: number, contentType: string, data: Buffer): Promise<void>;
}

const workspaces = (db: Runner) => db<WorkspaceRow>('workspaces');
const live = (db: Runner) => workspaces(db).whereNull('deleted_at');
const memberOf = (db: Runner, userId: number) => db('memberships').select('workspace_id').where('user_id', userId);

export const workspacesStore: WorkspacesStore = {
  liveById: (db, id) => live(db).where({ id }).first(),
  liveByName: (db, name) => live(db).where({ name }).first(),
  liveNames: async (db, ids) => (ids.length ? ((await live(db).whereIn('id', ids).orderBy('id').pluck('name')) as string[]) : []),
  nameById: async (db, id) => (await workspaces(db).where({ id }).first('name'))?.name,
  nameTaken: async (db, name) => Boolean(await workspaces(db).where({ name }).first('id')),
  insert: async (db, name, disabled, createdById) => (await workspaces(db).insert({ name, disabled, created_by_id: createdById }).returning('*'))[0]!,
  setDisabled: async (db, id, disabled) => (await live(db).where({ id }).update({ disabled, updated_at: new Date() }).returning('*'))[0],
  markDeleted: (db, id) => live(db).where({ id }).update({ deleted_at: new Date(), updated_at: new Date() }),
  setQuota: async (db, id, quota) => (await live(db).where({ id }).update({ ...quota, updated_at: new Date() }).returning('*'))[0],
  quotas: async (db, ids) => {
    if (!ids.length) return new Map();
    const rows = (await live(db).whereIn('id', ids).select('id', 'share_weight', 'max_in_flight', 'max_queued')) as Array<WorkspaceQuota & { id: number }>;
    return new Map(rows.map(({ id, ...quota }) => [id, quota]));
  },
  page: (db, page, userId) =>
    keysetPage<WorkspaceRow>(userId === undefined ? live(db) : live(db).whereIn('id', memberOf(db, userId)), page, { table: 'workspaces', idType: 'integer' }),

  logo: (db, workspaceId) => db<WorkspaceLogoRow>('workspace_logos').where({ workspace_id: workspaceId }).first(),
  saveLogo: async (db, workspaceId, contentType, data) => {
    await db<WorkspaceLogoRow>('workspace_logos')
      .insert({ workspace_id: workspaceId, content_type: contentType, data, updated_at: new Date() })
      .onConflict('workspace_id')
      .merge();
  },
};
