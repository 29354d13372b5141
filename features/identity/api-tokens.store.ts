import type { Runner } from '../../infra/db/database.js';
import { keysetPage, type Page, type PageOfRows } from '../../infra/db/keyset.js';

export interface ApiTokenRow {
  id: number;
  name: string;
  user_id: number;
  workspace_id: number;
  token_hash: string;
  expiration_date: string;
  last_used: Date | null;
  created: Date;
  is_active: boolean;
}

export type NewApiToken = Pick<ApiTokenRow, 'name' | 'user_id' | 'workspace_id' | 'token_hash' | 'expiration_date'>;

/** Every query of `api_tokens`. */
export interface ApiTokensStore {
  insert(db: Runner, token: NewApiToken): Promise<ApiTokenRow>;
  byHash(db: Runner, tokenHash: string): Promise<ApiTokenRow | undefined>;
  inWorkspace(db: Runner, workspaceId: number, id: number): Promise<ApiTokenRow | undefined>;
  /** A page of the workspace's tokens, newest first. */
  pageInWorkspace(db: Runner, workspaceId: number, page: Page): Promise<PageOfRows<ApiTokenRow>>;
  setActive(db: Runner, workspaceId: number, id: number, isActive: boolean): Promise<ApiTokenRow | undefined>;
  remove(db: Runner, workspaceId: number, id: number): Promise<number>;
  touch(db: Runner, id: number, at: Date): Promise<number>;
}

const tokens = (db: Runner) => db<ApiTokenRow>('api_tokens');

export const apiTokensStore: ApiTokensStore = {
  insert: async (db, token) => (await tokens(db).insert(token).returning('*'))[0]!,
  byHash: (db, tokenHash) => tokens(db).where({ token_hash: tokenHash }).first(),
  inWorkspace: (db, workspaceId, id) => tokens(db).where({ id, workspace_id: workspaceId }).first(),
  pageInWorkspace: (db, workspaceId, page) =>
    keysetPage<ApiTokenRow>(tokens(db).where({ workspace_id: workspaceId }), page, { table: 'api_tokens', idType: 'integer', createdAt: 'created' }),
  setActive: async (db, workspaceId, id, isActive) => (await tokens(db).where({ id, workspace_id: workspaceId }).update({ is_active: isActive }).returning('*'))[0],
  remove: (db, workspaceId, id) => tokens(db).where({ id, workspace_id: workspaceId }).delete(),
  touch: (db, id, at) => tokens(db).where({ id }).update({ last_used: at }),
};
