import type { Runner } from '../../infra/db/database.js';

// The sessions figure of the private server's scrape, deleted workspaces left
// out. It reads a table features/invocations/store.ts owns, where it belongs.

export interface SessionCount {
  workspace: string;
  model_code: string;
  model_version: string;
  user_id: number;
  state: string;
  n: number;
}

export interface MetricsStore {
  sessionCounts(db: Runner): Promise<SessionCount[]>;
}

export const metricsStore: MetricsStore = {
  sessionCounts: async (db) =>
    (await db('sessions as s')
      .join('workspaces as w', 'w.id', 's.workspace_id')
      .whereNull('w.deleted_at')
      .join('models as m', 'm.id', 's.model_id')
      .groupBy('w.name', 'm.model_code', 'm.version', 's.user_id', 's.state')
      .select('w.name as workspace', 'm.model_code', 'm.version as model_version', 's.user_id', 's.state')
      .count('* as n')) as unknown as SessionCount[],
};
