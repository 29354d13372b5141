import type { Runner } from '../../infra/db/database.js';

// The figures the database knows better than any process: read at scrape time
// (by the private server only), grouped by the labels the catalog filters on.
// Deleted workspaces, and soft-deleted models and deployments, are left out.

export interface SessionCount {
  workspace: string;
  model_code: string;
  model_version: string;
  user_id: number;
  state: string;
  n: number;
}

export interface DeploymentCount {
  workspace: string;
  proxy_class: string;
  connector_class: string;
  n: number;
}

export interface LiveModel {
  workspace: string;
  model_code: string;
  model_version: string;
}

/** `table as alias`, joined to its workspace as `w`, rows of live workspaces only. */
const inLiveWorkspace = (db: Runner, table: string, alias: string) => db(`${table} as ${alias}`).join('workspaces as w', 'w.id', `${alias}.workspace_id`).whereNull('w.deleted_at');

export const metricsStore = {
  sessionCounts: async (db: Runner): Promise<SessionCount[]> =>
    (await inLiveWorkspace(db, 'sessions', 's')
      .join('models as m', 'm.id', 's.model_id')
      .groupBy('w.name', 'm.model_code', 'm.version', 's.user_id', 's.state')
      .select('w.name as workspace', 'm.model_code', 'm.version as model_version', 's.user_id', 's.state')
      .count('* as n')) as unknown as SessionCount[],
  deploymentCounts: async (db: Runner): Promise<DeploymentCount[]> =>
    (await inLiveWorkspace(db, 'deployments', 'd')
      .whereNull('d.deleted_at')
      .groupBy('w.name', 'd.server_proxy_class', 'd.registry_connector_class')
      .select('w.name as workspace', 'd.server_proxy_class as proxy_class', 'd.registry_connector_class as connector_class')
      .count('* as n')) as unknown as DeploymentCount[],
  liveModels: async (db: Runner): Promise<LiveModel[]> =>
    (await inLiveWorkspace(db, 'models', 'm').whereNull('m.deleted_at').select('w.name as workspace', 'm.model_code', 'm.version as model_version')) as LiveModel[],
};
