import type { Runner } from '../../infra/db/database.js';
import { RefreshTokenFamilyRow } from '../../infra/db/models.js';

export const refreshStore = {
  create: (db: Runner, family: Pick<RefreshTokenFamilyRow, 'id' | 'user_id' | 'workspace_id' | 'current_jti_hash'>) =>
    RefreshTokenFamilyRow.query(db).insert(family),
  lockById: (db: Runner, id: string) => RefreshTokenFamilyRow.query(db).findById(id).forUpdate(),
  rotate: (db: Runner, id: string, jtiHash: string) =>
    RefreshTokenFamilyRow.query(db).patch({ current_jti_hash: jtiHash, rotated_at: new Date() }).where({ id }),
  revoke: (db: Runner, id: string, reason: string) =>
    RefreshTokenFamilyRow.query(db).patch({ revoked_at: new Date(), revoked_reason: reason }).where({ id }).whereNull('revoked_at'),
  revokeForWorkspace: (db: Runner, workspaceId: number, reason: string) =>
    RefreshTokenFamilyRow.query(db).patch({ revoked_at: new Date(), revoked_reason: reason }).where({ workspace_id: workspaceId }).whereNull('revoked_at'),
};
