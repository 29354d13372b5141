import type { Runner } from '../../infra/db/database.js';
import { keysetPage, type Page, type PageOfRows } from '../../infra/db/keyset.js';
import { clusterStateStore, type ClusterStateColumns, type ClusterStateStore } from '../deployments/cluster-state.js';

export interface StorageConfigRow extends ClusterStateColumns {
  id: number;
  workspace_id: number;
  storage_key: string;
  storage_class: string;
  connector_init: Record<string, unknown>;
  secrets_sealed: string | null;
  created_by_id: number | null;
  created_at: Date;
  deleted_at: Date | null;
}

export interface FileRow {
  id: string;
  workspace_id: number;
  storage_config_id: number;
  object_key: string;
  file_name: string;
  content_type: string;
  size: number;
  sha256: string;
  created_by_id: number | null;
  created_at: Date;
}

export interface UploadRow {
  id: string;
  workspace_id: number;
  storage_config_id: number;
  file_name: string;
  content_type: string | null;
  declared_size: number | null;
  created_by_id: number | null;
  expires_at: Date;
  used_at: Date | null;
  file_id: string | null;
}

export type NewStorageConfigRow = Pick<StorageConfigRow, 'workspace_id' | 'storage_key' | 'storage_class' | 'connector_init' | 'secrets_sealed' | 'created_by_id'>;

/** Every query of `storage_configs`. */
export interface StorageConfigsStore {
  insert(db: Runner, row: NewStorageConfigRow): Promise<StorageConfigRow>;
  liveByKey(db: Runner, workspaceId: number, key: string): Promise<StorageConfigRow | undefined>;
  byId(db: Runner, id: number): Promise<StorageConfigRow | undefined>;
  /** A page of the workspace's live storage configurations, newest first. */
  pageLive(db: Runner, workspaceId: number, page: Page): Promise<PageOfRows<StorageConfigRow>>;
  markDeleted(db: Runner, id: number): Promise<number>;
  /** Every live storage configuration of every live workspace, oldest first, with its workspace's name. */
  liveEverywhere(db: Runner): Promise<Array<StorageConfigRow & { workspace_name: string }>>;
  /** The reconciler's record of how far each configuration's StorageConfig got. */
  cluster: ClusterStateStore;
}

/** Every query of `files`. */
export interface FilesStore {
  insert(db: Runner, row: Omit<FileRow, 'created_at'>): Promise<FileRow>;
  inWorkspace(db: Runner, workspaceId: number, id: string): Promise<FileRow | undefined>;
}

/** Every query of `uploads`. */
export interface UploadsStore {
  insert(db: Runner, row: Omit<UploadRow, 'used_at' | 'file_id'>): Promise<UploadRow>;
  inWorkspace(db: Runner, workspaceId: number, id: string): Promise<UploadRow | undefined>;
  /** Takes the single-use id: only one request can win it. */
  take(db: Runner, workspaceId: number, id: string): Promise<UploadRow | undefined>;
  /** Gives the id back after a failed transfer, so the client can retry. */
  giveBack(db: Runner, id: string): Promise<number>;
  finish(db: Runner, id: string, fileId: string): Promise<number>;
}

const liveConfigs = (db: Runner, workspaceId: number) => db<StorageConfigRow>('storage_configs').where({ workspace_id: workspaceId }).whereNull('deleted_at');

export const storageConfigsStore: StorageConfigsStore = {
  insert: async (db, row) =>
    (await db<StorageConfigRow>('storage_configs').insert({ ...row, connector_init: JSON.stringify(row.connector_init) } as never).returning('*'))[0] as StorageConfigRow,
  liveByKey: (db, workspaceId, key) => liveConfigs(db, workspaceId).where({ storage_key: key }).first(),
  byId: (db, id) => db<StorageConfigRow>('storage_configs').where({ id }).first(),
  pageLive: (db, workspaceId, page) => keysetPage<StorageConfigRow>(liveConfigs(db, workspaceId), page, { table: 'storage_configs', idType: 'integer' }),
  markDeleted: (db, id) => db('storage_configs').where({ id }).whereNull('deleted_at').update({ deleted_at: new Date() }),
  liveEverywhere: (db) =>
    db('storage_configs as r').join('workspaces as w', 'w.id', 'r.workspace_id').whereNull('r.deleted_at').whereNull('w.deleted_at').orderBy('r.id').select('r.*', 'w.name as workspace_name'),
  cluster: clusterStateStore('storage_configs', 'storage_key'),
};

export const filesStore: FilesStore = {
  insert: async (db, row) => (await db<FileRow>('files').insert(row as never).returning('*'))[0] as FileRow,
  inWorkspace: (db, workspaceId, id) => db<FileRow>('files').where({ workspace_id: workspaceId, id }).first(),
};

export const uploadsStore: UploadsStore = {
  insert: async (db, row) => (await db<UploadRow>('uploads').insert(row as never).returning('*'))[0] as UploadRow,
  inWorkspace: (db, workspaceId, id) => db<UploadRow>('uploads').where({ workspace_id: workspaceId, id }).first(),
  take: async (db, workspaceId, id) =>
    (await db<UploadRow>('uploads')
      .where({ workspace_id: workspaceId, id })
      .whereNull('used_at')
      .where('expires_at', '>', new Date())
      .update({ used_at: new Date() } as never)
      .returning('*'))[0] as UploadRow | undefined,
  giveBack: (db, id) => db('uploads').where({ id }).whereNull('file_id').update({ used_at: null }),
  finish: (db, id, fileId) => db('uploads').where({ id }).update({ file_id: fileId }),
};
