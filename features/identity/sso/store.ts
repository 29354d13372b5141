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
  app_redirect_uri: string | null;
  app_code_challenge: string | null;
  app_state: string | null;
  /** The window its source's count of unfinished starts holds it in (features/identity/sso/starts.ts). */
  source_key_hash: string | null;
  source_window_ends: Date | null;
  expires_at: Date;
}

export interface SsoAppCodeRow {
  code_hash: string;
  redirect_uri: string;
  code_challenge: string;
  grant_sealed: string;
  expires_at: Date;
}

/** A device sign-in under way (RFC 8628): the provider's device code and the PKCE verifier, sealed, under the hash of the handle its CLI polls with. */
export interface SsoDeviceSignInRow {
  handle_hash: string;
  connection_id: string;
  secrets_sealed: string;
  interval_seconds: number;
  next_poll_at: Date;
  /** The window its source's count of unfinished starts holds it in (features/identity/sso/starts.ts). */
  source_key_hash: string | null;
  source_window_ends: Date | null;
  expires_at: Date;
}

/** A token family opened by a single sign-on, with the identity it signed in and the provider's refresh token. */
export interface SsoFamilyRow {
  family_id: string;
  identity_id: number;
  refresh_token_sealed: string;
  id_token_sealed: string | null;
  issuer: string;
  subject: string;
  connection_id: string;
  user_id: number;
}

/** Every query of `sso_identities`, `sso_sign_ins` and `sso_token_families`. */
export interface SsoStore {
  identity(db: Runner, issuer: string, subject: string): Promise<SsoIdentityRow | undefined>;
  /** Links the identity to its user (once); returns the link's id. */
  link(db: Runner, identity: Pick<SsoIdentityRow, 'issuer' | 'subject' | 'connection_id' | 'user_id' | 'email'>): Promise<number>;
  touch(db: Runner, id: number, email: string, at: Date): Promise<void>;
  startSignIn(db: Runner, row: SsoSignInRow): Promise<void>;
  /** Deletes and returns the sign-in of this state, if it has not expired: a state is taken once. */
  takeSignIn(db: Runner, stateHash: string, now: Date): Promise<SsoSignInRow | undefined>;
  removeExpiredSignIns(db: Runner, now: Date): Promise<number>;
  /** Stores the code, and drops the codes expired by `now`. */
  putAppCode(db: Runner, row: SsoAppCodeRow, now: Date): Promise<void>;
  /** Deletes and returns the code's row, if it has not expired: a code is redeemed once. */
  takeAppCode(db: Runner, codeHash: string, now: Date): Promise<SsoAppCodeRow | undefined>;
  /** Stores the device sign-in, and drops those expired by `now`. */
  startDeviceSignIn(db: Runner, row: SsoDeviceSignInRow, now: Date): Promise<void>;
  /** The live device sign-in whose next poll is due, its next one moved on by its interval; undefined when none is due. */
  claimDevicePoll(db: Runner, handleHash: string, now: Date): Promise<SsoDeviceSignInRow | undefined>;
  /** Lengthens the live device sign-in's interval by `seconds`, counted from `now`; undefined when it has expired or ended. */
  slowDeviceSignIn(db: Runner, handleHash: string, seconds: number, now: Date): Promise<SsoDeviceSignInRow | undefined>;
  /** Deletes the device sign-in; returns it, if it was there. */
  endDeviceSignIn(db: Runner, handleHash: string): Promise<SsoDeviceSignInRow | undefined>;
  keepFamily(db: Runner, family: { familyId: string; identityId: number; refreshTokenSealed: string; idTokenSealed: string | null }): Promise<void>;
  family(db: Runner, familyId: string): Promise<SsoFamilyRow | undefined>;
  replaceFamilyTokens(db: Runner, familyId: string, refreshTokenSealed: string, idTokenSealed: string | null): Promise<void>;
}

const identities = (db: Runner) => db<SsoIdentityRow>('sso_identities');
const signIns = (db: Runner) => db<SsoSignInRow>('sso_sign_ins');
const deviceSignIns = (db: Runner) => db<SsoDeviceSignInRow>('sso_device_sign_ins');
/** `at` plus the row's interval (after `extra` seconds more), in SQL: the row's own interval moves its next poll. */
const afterInterval = (db: Runner, at: Date, extra = 0) => db.raw("?::timestamptz + (interval_seconds + ?) * interval '1 second'", [at, extra]);

export const ssoStore: SsoStore = {
  identity: (db, issuer, subject) => identities(db).where({ issuer, subject }).first(),
  // Two first sign-ins of one person at once: the second finds the first one's link.
  link: async (db, identity) =>
    (await identities(db).insert(identity).onConflict(['issuer', 'subject']).ignore().returning('id'))[0]?.id ??
    (await identities(db).where({ issuer: identity.issuer, subject: identity.subject }).first('id'))!.id,
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
  putAppCode: async (db, row, now) => {
    await db('sso_app_codes').where('expires_at', '<=', now).delete();
    await db('sso_app_codes').insert(row);
  },
  takeAppCode: async (db, codeHash, now) => {
    const row = (await db<SsoAppCodeRow>('sso_app_codes').where({ code_hash: codeHash }).delete().returning('*'))[0];
    return row && new Date(row.expires_at) > now ? row : undefined;
  },
  startDeviceSignIn: async (db, row, now) => {
    await deviceSignIns(db).where('expires_at', '<=', now).delete();
    await deviceSignIns(db).insert(row);
  },
  // One conditional UPDATE: of two polls at once, one reaches the provider.
  claimDevicePoll: async (db, handleHash, now) =>
    (await deviceSignIns(db).where({ handle_hash: handleHash }).where('next_poll_at', '<=', now).where('expires_at', '>', now).update({ next_poll_at: afterInterval(db, now) }).returning('*'))[0],
  slowDeviceSignIn: async (db, handleHash, seconds, now) =>
    (
      await deviceSignIns(db)
        .where({ handle_hash: handleHash })
        .where('expires_at', '>', now)
        .update({ interval_seconds: db.raw('interval_seconds + ?', [seconds]), next_poll_at: afterInterval(db, now, seconds) })
        .returning('*')
    )[0],
  endDeviceSignIn: async (db, handleHash) => (await deviceSignIns(db).where({ handle_hash: handleHash }).delete().returning('*'))[0],
  keepFamily: async (db, family) => {
    await db('sso_token_families').insert({
      family_id: family.familyId,
      identity_id: family.identityId,
      refresh_token_sealed: family.refreshTokenSealed,
      id_token_sealed: family.idTokenSealed,
    });
  },
  family: (db, familyId) =>
    db('sso_token_families as f')
      .join('sso_identities as i', 'i.id', 'f.identity_id')
      .where('f.family_id', familyId)
      .first<SsoFamilyRow | undefined>('f.family_id', 'f.identity_id', 'f.refresh_token_sealed', 'f.id_token_sealed', 'i.issuer', 'i.subject', 'i.connection_id', 'i.user_id'),
  replaceFamilyTokens: async (db, familyId, refreshTokenSealed, idTokenSealed) => {
    const idToken = idTokenSealed ? { id_token_sealed: idTokenSealed } : {};
    await db('sso_token_families').where({ family_id: familyId }).update({ refresh_token_sealed: refreshTokenSealed, ...idToken });
  },
};
