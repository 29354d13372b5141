import type { Runner } from '../../../infra/db/database.js';

export interface DashboardSessionRow {
  id_hash: string;
  user_id: number;
  workspace_id: number | null;
  tokens_sealed: string;
  created_at: Date;
  refreshed_at: Date | null;
  expires_at: Date;
}

export type NewDashboardSession = Pick<DashboardSessionRow, 'id_hash' | 'user_id' | 'workspace_id' | 'tokens_sealed' | 'expires_at'>;
export type SessionTokens = Pick<DashboardSessionRow, 'workspace_id' | 'tokens_sealed' | 'expires_at'>;

const table = (db: Runner) => db<DashboardSessionRow>('dashboard_sessions');

export const dashboardSessionsStore = {
  insert: async (db: Runner, row: NewDashboardSession) => {
    await table(db).insert(row);
  },
  live: (db: Runner, idHash: string, now: Date) =>
    table(db).where('id_hash', idHash).andWhere('expires_at', '>', now).first() as Promise<DashboardSessionRow | undefined>,
  replaceTokens: async (db: Runner, idHash: string, tokens: SessionTokens, now: Date) => {
    await table(db).where('id_hash', idHash).update({ ...tokens, refreshed_at: now });
  },
  remove: async (db: Runner, idHash: string) => {
    await table(db).where('id_hash', idHash).delete();
  },
  removeExpired: async (db: Runner, now: Date) => {
    await table(db).where('expires_at', '<=', now).delete();
  },
};
