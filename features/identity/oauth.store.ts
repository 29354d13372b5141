import type { Runner } from '../../infra/db/database.js';
import { OAuthApplicationRow } from '../../infra/db/models.js';

export const oauthStore = {
  insert: (db: Runner, app: Pick<OAuthApplicationRow, 'name' | 'workspace_id' | 'client_id' | 'client_secret_hash' | 'service_user_id' | 'role' | 'created_by_id'>) =>
    OAuthApplicationRow.query(db).insert(app).returning('*'),
  byClientId: (db: Runner, clientId: string) => OAuthApplicationRow.query(db).findOne({ client_id: clientId }),
  inWorkspace: (db: Runner, workspaceId: number, id: number) => OAuthApplicationRow.query(db).findOne({ id, workspace_id: workspaceId }),
  listInWorkspace: (db: Runner, workspaceId: number) => OAuthApplicationRow.query(db).where({ workspace_id: workspaceId }).orderBy('id'),
  setSecret: (db: Runner, id: number, secretHash: string) =>
    OAuthApplicationRow.query(db).patch({ client_secret_hash: secretHash, updated_at: new Date() }).where({ id }),
  remove: (db: Runner, id: number) => OAuthApplicationRow.query(db).delete().where({ id }),
};
