import type { Runner } from '../../infra/db/database.js';
import { keysetPage, type Page, type PageOfRows } from '../../infra/db/keyset.js';
import type { TableFormat } from './table/files.js';

/** What an export took: one closed session, or the caller's closed sessions matching a filter. */
export type Selection =
  | { kind: 'session'; session_id: string; model_code: string; model_version: string }
  | { kind: 'filter'; model_code?: string; model_version?: string; created_after?: string; created_before?: string; with_feedback?: boolean };

export interface DatasetRow {
  id: string;
  workspace_id: number;
  created_by_id: number;
  storage_config_id: number;
  name: string;
  version: number;
  selection: Selection;
  object_key: string;
  manifest_object_key: string;
  row_count: number;
  size: number;
  sha256: string;
  /** The table written beside the records; null for versions exported before tables existed. */
  table_format: TableFormat | null;
  table_object_key: string | null;
  table_size: number | null;
  table_sha256: string | null;
  created_at: Date;
}

/** A dataset as read back: with the key of the storage configuration that holds its files. */
export type StoredDataset = DatasetRow & { storage_key: string };

/** Datasets are the exporting user's: every read is filtered by workspace and creator. */
const ofUser = (db: Runner, workspaceId: number, userId: number) => db<DatasetRow>('datasets').where({ workspace_id: workspaceId, created_by_id: userId });
const readOfUser = (db: Runner, workspaceId: number, userId: number) =>
  db('datasets as d')
    .join('storage_configs as c', 'c.id', 'd.storage_config_id')
    .where({ 'd.workspace_id': workspaceId, 'd.created_by_id': userId })
    .select<StoredDataset[]>('d.*', 'c.storage_key');

/** Every query of `datasets`; a dataset is read with the key of the storage configuration that holds it. */
export interface DatasetsStore {
  insert(db: Runner, row: DatasetRow): Promise<void>;
  nextVersion(db: Runner, workspaceId: number, userId: number, name: string): Promise<number>;
  ofUser(db: Runner, workspaceId: number, userId: number, id: string): Promise<StoredDataset | undefined>;
  /** A page of the caller's datasets, newest first, optionally of one name. */
  pageOfUser(db: Runner, workspaceId: number, userId: number, page: Page, name?: string): Promise<PageOfRows<StoredDataset>>;
}


export const datasetsStore: DatasetsStore = {
  insert: async (db, row) => {
    await db('datasets').insert({ ...row, selection: JSON.stringify(row.selection) } as never);
  },
  nextVersion: async (db, workspaceId, userId, name) =>
    Number(((await ofUser(db, workspaceId, userId).where({ name }).max('version as v').first()) as { v: number | null } | undefined)?.v ?? 0) + 1,
  ofUser: async (db, workspaceId, userId, id) => (await readOfUser(db, workspaceId, userId).where('d.id', id))[0],
  pageOfUser: (db, workspaceId, userId, page, name) => {
    const query = readOfUser(db, workspaceId, userId);
    if (name) query.where('d.name', name);
    return keysetPage<StoredDataset>(query, page, { table: 'd', idType: 'uuid' });
  },
};

