import type { Runner } from '../../../infra/db/database.js';

export interface SsoIdentityRow {
  id: number;
  issuer: string;
  subject: string;
  connection_id: string;
  user_id: number;
  email: string;
  created_at: Date;
  last_sign_in_at: Date;
}

export interface SsoSignInRow {
  state_hash: string;
  connection_id: string;
  browser_hash: string;
  secrets_sealed: string;
  return_to: string | null;
  expires_at: Date;
}

/** Every query of `sso_identities` and `sso_sign_ins`. */
export interface SsoStore {
  identity(db: Runner, issuer: string, subject: string): Promise<SsoIdentityRow | undefined>;
  link(db: Runner, identity: Pick<SsoIdentityRow, 'issuer' | 'subject' | 'connection_id' | 'user_id' | 'email'>): Promise<void>;
  touch(db: Runner, id: number, email: string, at: Date): Promise<void>;
  startSignIn(db: Runner, row: SsoSignInRow): Promise<void>;
  /** Deletes and returns the sign-in of this state, if it has not expired: a state is taken once. */
  takeSignIn(db: Runner, stateHash: string, now: Date): Promise<SsoSignInRow | undefined>;
  removeExpiredSignIns(db: Runner, now: Date): Promise<number>;
}

const identities = (db: Runner) => db<SsoIdentityRow>('sso_identities');
const signIns = (db: Runner) => db<SsoSignInRow>('sso_sign_ins');

export const ssoStore: SsoStore = {
  identity: (db, issuer, subject) => identities(db).where({ issuer, subject }).first(),
  link: async (db, identity) => {
    await identities(db).insert(identity);
  },
  touch: async (db, id, email, at) => {
    await identities(db).where({ id }).update({ email, last_sign_in_at: at });
  },
  startSignIn: async (db, row) => {
    await signIns(db).insert(row);
  },
  takeSignIn: async (db, stateHash, now) => {
    const rows = await signIns(db).where({ state_hash: stateHash }).delete().returning('*');
    const row = rows[0];
    return row && new Date(row.expires_at) > now ? row : undefined;
  },
  removeExpiredSignIns: (db, now) => signIns(db).where('expires_at', '<=', now).delete(),
};
