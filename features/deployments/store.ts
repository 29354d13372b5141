import type { Runner } from '../../infra/db/database.js';
import { keysetPage, type Page } from '../../infra/db/keyset.js';

export interface DeploymentRow {
  id: number;
  workspace_id: number;
  deployment_key: string;
  registry_connector_class: string;
  registry_connector_init: Record<string, unknown>;
  server_proxy_class: string;
  server_proxy_init: Record<string, unknown>;
  secrets_sealed: string | null;
  created_by_id: number | null;
  created_at: Date;
  deleted_at: Date | null;
}

const live = (db: Runner, workspaceId: number) => db<DeploymentRow>('deployments').where({ workspace_id: workspaceId }).whereNull('deleted_at');

export const deploymentsStore = {
  /** Any deployment with this key, in any workspace, deleted or not: keys are never reused. */
  keyTaken: async (db: Runner, key: string) => Boolean(await db('deployments').where({ deployment_key: key }).first('id')),
  insert: async (db: Runner, row: Omit<DeploymentRow, 'id' | 'created_at' | 'deleted_at'>) =>
    (await db<DeploymentRow>('deployments').insert(row as never).returning('*'))[0] as DeploymentRow,
  liveByKey: (db: Runner, workspaceId: number, key: string) => live(db, workspaceId).where({ deployment_key: key }).first(),
  byId: (db: Runner, id: number) => db<DeploymentRow>('deployments').where({ id }).first(),
  listLive: (db: Runner, workspaceId: number) => live(db, workspaceId).orderBy('id'),
  /** A page of the workspace's live deployments, newest first. */
  pageLive: (db: Runner, workspaceId: number, page: Page) => keysetPage<DeploymentRow>(live(db, workspaceId), page, { table: 'deployments', idType: 'integer' }),
  /** The live models a deployment serves: while there is one, it cannot be deleted. */
  liveModelsServed: (db: Runner, id: number) =>
    db('models').where({ deployment_id: id }).whereNull('deleted_at').select('model_code', 'version') as Promise<Array<{ model_code: string; version: string }>>,
  markDeleted: (db: Runner, id: number) => db('deployments').where({ id }).whereNull('deleted_at').update({ deleted_at: new Date() }),
};
