import type { Runner } from '../../infra/db/database.js';

export interface RefreshTokenFamilyRow {
  id: string;
  user_id: number;
  workspace_id: number | null;
  current_jti_hash: string;
  created_at: Date;
  rotated_at: Date | null;
  revoked_at: Date | null;
  revoked_reason: string | null;
}

/** Every query of `refresh_token_families`. */
export interface RefreshStore {
  create(db: Runner, family: Pick<RefreshTokenFamilyRow, 'id' | 'user_id' | 'workspace_id' | 'current_jti_hash'>): Promise<void>;
  byId(db: Runner, id: string): Promise<RefreshTokenFamilyRow | undefined>;
  /** The family, locked until the transaction ends: one rotation at a time. */
  lockById(db: Runner, id: string): Promise<RefreshTokenFamilyRow | undefined>;
  rotate(db: Runner, id: string, jtiHash: string): Promise<number>;
  revoke(db: Runner, id: string, reason: string): Promise<number>;
  revokeForWorkspace(db: Runner, workspaceId: number, reason: string): Promise<number>;
  /** Every live family of the user: all their sign-ins end. */
  revokeForUser(db: Runner, userId: number, reason: string): Promise<number>;
}

const families = (db: Runner) => db<RefreshTokenFamilyRow>('refresh_token_families');

export const refreshStore: RefreshStore = {
  create: async (db, family) => {
    await families(db).insert(family);
  },
  byId: (db, id) => families(db).where({ id }).first(),
  lockById: (db, id) => families(db).where({ id }).forUpdate().first(),
  rotate: (db, id, jtiHash) => families(db).where({ id }).update({ current_jti_hash: jtiHash, rotated_at: new Date() }),
  revoke: (db, id, reason) => families(db).where({ id }).whereNull('revoked_at').update({ revoked_at: new Date(), revoked_reason: reason }),
  revokeForWorkspace: (db, workspaceId, reason) =>
    families(db).where({ workspace_id: workspaceId }).whereNull('revoked_at').update({ revoked_at: new Date(), revoked_reason: reason }),
  revokeForUser: (db, userId, reason) => families(db).where({ user_id: userId }).whereNull('revoked_at').update({ revoked_at: new Date(), revoked_reason: reason }),
};
