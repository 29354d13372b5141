import type { Runner } from '../../infra/db/database.js';
import type { Role } from '../auth/principal.js';

export interface OAuthApplicationRow {
  id: number;
  name: string;
  workspace_id: number;
  client_id: string;
  client_secret_hash: string;
  service_user_id: number;
  role: Role;
  created_by_id: number | null;
  created_at: Date;
  updated_at: Date;
}

export type NewOAuthApplication = Pick<OAuthApplicationRow, 'name' | 'workspace_id' | 'client_id' | 'client_secret_hash' | 'service_user_id' | 'role' | 'created_by_id'>;

/** Every query of `oauth_applications`. */
export interface OAuthStore {
  insert(db: Runner, app: NewOAuthApplication): Promise<OAuthApplicationRow>;
  byClientId(db: Runner, clientId: string): Promise<OAuthApplicationRow | undefined>;
  inWorkspace(db: Runner, workspaceId: number, id: number): Promise<OAuthApplicationRow | undefined>;
  listInWorkspace(db: Runner, workspaceId: number): Promise<OAuthApplicationRow[]>;
  setSecret(db: Runner, id: number, secretHash: string): Promise<number>;
  remove(db: Runner, id: number): Promise<number>;
}

const applications = (db: Runner) => db<OAuthApplicationRow>('oauth_applications');

export const oauthStore: OAuthStore = {
  insert: async (db, app) => (await applications(db).insert(app).returning('*'))[0]!,
  byClientId: (db, clientId) => applications(db).where({ client_id: clientId }).first(),
  inWorkspace: (db, workspaceId, id) => applications(db).where({ id, workspace_id: workspaceId }).first(),
  listInWorkspace: (db, workspaceId) => applications(db).where({ workspace_id: workspaceId }).orderBy('id'),
  setSecret: (db, id, secretHash) => applications(db).where({ id }).update({ client_secret_hash: secretHash, updated_at: new Date() }),
  remove: (db, id) => applications(db).where({ id }).delete(),
};
