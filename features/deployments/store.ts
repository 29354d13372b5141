import type { Runner } from '../../infra/db/database.js';
import { keysetPage, type Page, type PageOfRows } from '../../infra/db/keyset.js';
import { clusterStateStore, type ClusterStateColumns, type ClusterStateStore } from './cluster-state.js';

export interface DeploymentRow extends ClusterStateColumns {
  id: number;
  workspace_id: number;
  deployment_key: string;
  registry_connector_class: string;
  registry_connector_init: Record<string, unknown>;
  server_proxy_class: string;
  server_proxy_init: Record<string, unknown>;
  secrets_sealed: string | null;
  /** Calls to its model server at once, across executors; null: no limit. */
  max_concurrent_calls: number | null;
  created_by_id: number | null;
  created_at: Date;
  deleted_at: Date | null;
}

/** Live deployments of live workspaces, by workspace name and classes: a gauge of the private server's scrape. */
export interface DeploymentCount {
  workspace: string;
  proxy_class: string;
  connector_class: string;
  n: number;
}

const live = (db: Runner, workspaceId: number) => db<DeploymentRow>('deployments').where({ workspace_id: workspaceId }).whereNull('deleted_at');

export type NewDeploymentRow = Omit<DeploymentRow, 'id' | 'created_at' | 'deleted_at' | keyof ClusterStateColumns>;

/** Every query of `deployments`. */
export interface DeploymentsStore {
  /** Any deployment with this key, in any workspace, deleted or not: keys are never reused. */
  keyTaken(db: Runner, key: string): Promise<boolean>;
  insert(db: Runner, row: NewDeploymentRow): Promise<DeploymentRow>;
  liveByKey(db: Runner, workspaceId: number, key: string): Promise<DeploymentRow | undefined>;
  byId(db: Runner, id: number): Promise<DeploymentRow | undefined>;
  listLive(db: Runner, workspaceId: number): Promise<DeploymentRow[]>;
  /** A page of the workspace's live deployments, newest first. */
  pageLive(db: Runner, workspaceId: number, page: Page): Promise<PageOfRows<DeploymentRow>>;
  /** Live deployments of every live workspace, counted by workspace and classes. */
  countsByClass(db: Runner): Promise<DeploymentCount[]>;
  markDeleted(db: Runner, id: number): Promise<number>;
  /** Undefined when it is no longer live. */
  setMaxConcurrentCalls(db: Runner, id: number, value: number | null): Promise<DeploymentRow | undefined>;
  /** Every live deployment of every live workspace (of that registry class, when given), oldest first, with its workspace's name. */
  liveEverywhere(db: Runner, registryClass?: string): Promise<Array<DeploymentRow & { workspace_name: string }>>;
  /** The reconciler's record of how far each deployment's ModelDeployment got. */
  cluster: ClusterStateStore;
}

export const deploymentsStore: DeploymentsStore = {
  keyTaken: async (db, key) => Boolean(await db('deployments').where({ deployment_key: key }).first('id')),
  insert: async (db, row) => (await db<DeploymentRow>('deployments').insert(row as never).returning('*'))[0] as DeploymentRow,
  liveByKey: (db, workspaceId, key) => live(db, workspaceId).where({ deployment_key: key }).first(),
  byId: (db, id) => db<DeploymentRow>('deployments').where({ id }).first(),
  listLive: (db, workspaceId) => live(db, workspaceId).orderBy('id'),
  pageLive: (db, workspaceId, page) => keysetPage<DeploymentRow>(live(db, workspaceId), page, { table: 'deployments', idType: 'integer' }),
  countsByClass: async (db) =>
    (await db('deployments as d')
      .join('workspaces as w', 'w.id', 'd.workspace_id')
      .whereNull('w.deleted_at')
      .whereNull('d.deleted_at')
      .groupBy('w.name', 'd.server_proxy_class', 'd.registry_connector_class')
      .select('w.name as workspace', 'd.server_proxy_class as proxy_class', 'd.registry_connector_class as connector_class')
      .count('* as n')) as unknown as DeploymentCount[],
  markDeleted: (db, id) => db('deployments').where({ id }).whereNull('deleted_at').update({ deleted_at: new Date() }),
  setMaxConcurrentCalls: async (db, id, value) =>
    (await db<DeploymentRow>('deployments').where({ id }).whereNull('deleted_at').update({ max_concurrent_calls: value }).returning('*'))[0] as DeploymentRow | undefined,
  liveEverywhere: (db, registryClass) =>
    db('deployments as r')
      .join('workspaces as w', 'w.id', 'r.workspace_id')
      .whereNull('r.deleted_at')
      .whereNull('w.deleted_at')
      .modify((q) => void (registryClass && q.where('r.registry_connector_class', registryClass)))
      .orderBy('r.id')
      .select('r.*', 'w.name as workspace_name'),
  cluster: clusterStateStore('deployments', 'deployment_key'),
};
