import type { Runner } from '../../infra/db/database.js';
import { WorkspaceLogoRow, WorkspaceRow } from '../../infra/db/models.js';
import { keysetPage, type Page } from '../../infra/db/keyset.js';

export type { Page } from '../../infra/db/keyset.js';

const live = (db: Runner) => WorkspaceRow.query(db).whereNull('deleted_at');
const memberOf = (db: Runner, userId: number) => db('memberships').select('workspace_id').where('user_id', userId);

export const workspacesStore = {
  liveById: (db: Runner, id: number) => live(db).findById(id),
  liveByName: (db: Runner, name: string) => live(db).findOne({ name }),
  /** The name of any workspace, deleted ones included: a name never changes, so callers may keep it. */
  nameOf: async (db: Runner, id: number): Promise<string> => {
    const row = (await db('workspaces').where({ id }).first('name')) as { name: string } | undefined;
    if (!row) throw new Error(`Workspace ${id} does not exist.`);
    return row.name;
  },
  /** Any workspace, deleted ones included: names stay reserved forever. */
  nameTaken: async (db: Runner, name: string) => Boolean(await WorkspaceRow.query(db).findOne({ name })),
  insert: (db: Runner, name: string, disabled: boolean, createdById: number | null) =>
    WorkspaceRow.query(db).insert({ name, disabled, created_by_id: createdById }).returning('*'),
  setDisabled: (db: Runner, id: number, disabled: boolean) =>
    live(db).patch({ disabled, updated_at: new Date() }).where({ id }).returning('*').first(),
  markDeleted: (db: Runner, id: number) => live(db).patch({ deleted_at: new Date(), updated_at: new Date() }).where({ id }),

  /** A page of every live workspace (staff), or of those the user belongs to, newest first. */
  page: (db: Runner, page: Page, userId?: number) => {
    const query = db('workspaces').whereNull('deleted_at');
    return keysetPage<WorkspaceRow>(userId === undefined ? query : query.whereIn('id', memberOf(db, userId)), page, { table: 'workspaces', idType: 'integer' });
  },
  listForUser: (db: Runner, userId: number, page: Page) =>
    live(db).whereIn('id', memberOf(db, userId)).orderBy('id').limit(page.limit).offset(page.offset),

  logo: (db: Runner, workspaceId: number) => WorkspaceLogoRow.query(db).findById(workspaceId),
  saveLogo: (db: Runner, workspaceId: number, contentType: string, data: Buffer) =>
    WorkspaceLogoRow.query(db)
      .insert({ workspace_id: workspaceId, content_type: contentType, data, updated_at: new Date() })
      .onConflict('workspace_id')
      .merge(),
};
