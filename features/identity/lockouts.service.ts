import type { AccountKind, LoginGuard } from '../auth/login-guard.js';
import { normaliseEmail } from './users.store.js';

/** Sources listed in a lock's view, the most failures first; the rest are counted only. */
const SOURCES_SHOWN = 100;

export interface LockView {
  kind: 'account' | 'client';
  /** The e-mail (normalised) or client id asked about. */
  id: string;
  failures: number;
  ceiling: number;
  /** What an attempt from a source unknown to the account waits now. */
  delay_ms: number;
  window_ends_at: string | null;
  source_limit: number;
  locked_sources: number;
  sources: Array<{ source: string; failures: number; locked: boolean; retry_after: number | null }>;
}

/**
 * Staff's view of the login lock-out: the state of the account or OAuth
 * client they name, and lifting it. Windows are stored under hashed keys, so
 * a lock is found from the name staff give, and sources are shown by an
 * opaque id (the address was never stored).
 */
export class LockoutsService {
  constructor(private readonly guard: LoginGuard) {}

  async state(kind: LockView['kind'], id: string): Promise<LockView> {
    const name = nameOf(kind, id);
    const windows = await this.guard.windows(guardKind(kind), name);
    const { perAccount, perSource } = this.guard.limits;
    const failures = windows.account?.count ?? 0;
    const sources = windows.sources.map((row) => {
      const locked = row.count > perSource;
      return { source: row.key_hash.slice(0, 16), failures: row.count, locked, retry_after: locked ? this.guard.secondsLeft(row.reset_at) : null };
    });
    return {
      kind,
      id: name,
      failures,
      ceiling: perAccount,
      delay_ms: this.guard.delayFor(failures + 1),
      window_ends_at: windows.account?.reset_at.toISOString() ?? null,
      source_limit: perSource,
      locked_sources: sources.filter((source) => source.locked).length,
      sources: sources.slice(0, SOURCES_SHOWN),
    };
  }

  /** Every source's failures on the account start again from nothing; sources known to it stay known. */
  async lift(kind: LockView['kind'], id: string): Promise<void> {
    await this.guard.lift(guardKind(kind), nameOf(kind, id));
  }
}

const guardKind = (kind: LockView['kind']): AccountKind => (kind === 'account' ? 'login' : 'oauth');
const nameOf = (kind: LockView['kind'], id: string) => (kind === 'account' ? normaliseEmail(id) : id);
