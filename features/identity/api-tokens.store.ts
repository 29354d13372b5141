import type { Runner } from '../../infra/db/database.js';
import { ApiTokenRow } from '../../infra/db/models.js';

export const apiTokensStore = {
  insert: (db: Runner, token: Pick<ApiTokenRow, 'name' | 'user_id' | 'workspace_id' | 'token_hash' | 'expiration_date'>) =>
    ApiTokenRow.query(db).insert(token).returning('*'),
  byHash: (db: Runner, tokenHash: string) => ApiTokenRow.query(db).findOne({ token_hash: tokenHash }),
  inWorkspace: (db: Runner, workspaceId: number, id: number) => ApiTokenRow.query(db).findOne({ id, workspace_id: workspaceId }),
  listInWorkspace: (db: Runner, workspaceId: number, page: { limit: number; offset: number }) =>
    ApiTokenRow.query(db).where({ workspace_id: workspaceId }).orderBy('id').limit(page.limit).offset(page.offset),
  countInWorkspace: async (db: Runner, workspaceId: number) =>
    Number(((await ApiTokenRow.query(db).where({ workspace_id: workspaceId }).count('* as n').first()) as unknown as { n: number }).n),
  setActive: (db: Runner, workspaceId: number, id: number, isActive: boolean) =>
    ApiTokenRow.query(db).patch({ is_active: isActive }).where({ id, workspace_id: workspaceId }).returning('*').first(),
  remove: (db: Runner, workspaceId: number, id: number) => ApiTokenRow.query(db).delete().where({ id, workspace_id: workspaceId }),
  touch: (db: Runner, id: number, at: Date) => ApiTokenRow.query(db).patch({ last_used: at }).where({ id }),
};
