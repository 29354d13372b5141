import type { Runner } from '../../infra/db/database.js';
import { ApiTokenRow } from '../../infra/db/models.js';
import { keysetPage, type Page } from '../../infra/db/keyset.js';

export const apiTokensStore = {
  insert: (db: Runner, token: Pick<ApiTokenRow, 'name' | 'user_id' | 'workspace_id' | 'token_hash' | 'expiration_date'>) =>
    ApiTokenRow.query(db).insert(token).returning('*'),
  byHash: (db: Runner, tokenHash: string) => ApiTokenRow.query(db).findOne({ token_hash: tokenHash }),
  inWorkspace: (db: Runner, workspaceId: number, id: number) => ApiTokenRow.query(db).findOne({ id, workspace_id: workspaceId }),
  /** A page of the workspace's tokens, newest first. */
  pageInWorkspace: (db: Runner, workspaceId: number, page: Page) =>
    keysetPage<ApiTokenRow>(db('api_tokens').where({ workspace_id: workspaceId }), page, { table: 'api_tokens', idType: 'integer', createdAt: 'created' }),
  setActive: (db: Runner, workspaceId: number, id: number, isActive: boolean) =>
    ApiTokenRow.query(db).patch({ is_active: isActive }).where({ id, workspace_id: workspaceId }).returning('*').first(),
  remove: (db: Runner, workspaceId: number, id: number) => ApiTokenRow.query(db).delete().where({ id, workspace_id: workspaceId }),
  touch: (db: Runner, id: number, at: Date) => ApiTokenRow.query(db).patch({ last_used: at }).where({ id }),
};
