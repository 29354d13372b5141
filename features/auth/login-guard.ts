import { setTimeout as sleep } from 'node:timers/promises';
import type { Db } from '../../infra/db/database.js';
import { sha256 } from '../../infra/crypto/random.js';
import { RateLimitedError } from '../../kernel/errors/errors.js';
import { RateLimiter, secondsUntil, type Attempt } from './rate-limit.js';
import type { RateLimitStore, RateLimitWindowRow } from './rate-limit.store.js';
import { sourceOf } from './source.js';

/** What a credential names: a user's e-mail (password login) or an OAuth client id (client credentials). */
export type AccountKind = 'login' | 'oauth';

export interface LoginGuardOptions {
  /** Failures of one source on one account per window; past them that source is refused on that account. */
  perSource: number;
  /** Failures of every source on one account per window; past them attempts from unknown sources wait. */
  perAccount: number;
  /** Failures of one source on any account per window; past them that source is refused everywhere. */
  perAddress: number;
  windowMs: number;
  /** The longest an attempt waits; 0: no waiting. */
  maxDelayMs: number;
  /** Attempts of one process waiting at once; one more is refused (429) instead of held. */
  maxWaiting: number;
  /** How long a source that logged in to an account is known to it. */
  knownSourceMs: number;
}

/** One admitted attempt: its counts, to take back if its credentials turn out right. */
export interface Pass {
  address: Attempt;
  pair: Attempt;
  account: Attempt;
  knownKeyHash: string;
}

/** An account's windows as staff see them: the account's own, then one per source that failed on it. */
export interface AccountWindows {
  account: Pick<RateLimitWindowRow, 'count' | 'reset_at'> | null;
  sources: Array<Pick<RateLimitWindowRow, 'key_hash' | 'count' | 'reset_at'>>;
}

const KEYS: Record<AccountKind, { account: string; pair: string; known: string; address: string }> = {
  login: { account: 'login-account', pair: 'login-account-source', known: 'login-known', address: 'login-ip' },
  oauth: { account: 'oauth-client', pair: 'oauth-client-source', known: 'oauth-known', address: 'oauth-ip' },
};

/** The delay at the account's ceiling, doubling with every `perSource` failures past it. */
const FIRST_DELAY_MS = 250;

/**
 * Lock-out that an attacker cannot aim at a victim. Failures count per
 * (account, source): one source past its limit is refused on that account
 * only. Past the account's ceiling (many sources), an attempt from a source
 * that has not logged in to the account recently waits a delay growing with
 * the failures, capped, then is checked as usual; a known source never waits.
 * Waiting is a timer that holds no database connection, at most one per
 * source and `maxWaiting` per process, so the delay cannot be turned into a
 * way of filling the server's request slots.
 */
export class LoginGuard {
  private readonly addressLimiter: RateLimiter;
  private readonly pairLimiter: RateLimiter;
  private readonly accountCounter: RateLimiter;
  /** Sources waiting out a delay in this process. */
  private readonly waiting = new Set<string>();

  constructor(
    private readonly db: Db,
    private readonly store: RateLimitStore,
    private readonly options: LoginGuardOptions,
    private readonly now: () => number = Date.now,
    private readonly wait: (ms: number) => Promise<unknown> = sleep,
  ) {
    const windowMs = options.windowMs;
    this.addressLimiter = new RateLimiter(db, store, { limit: options.perAddress, windowMs }, now);
    this.pairLimiter = new RateLimiter(db, store, { limit: options.perSource, windowMs }, now);
    this.accountCounter = new RateLimiter(db, store, { limit: Number.MAX_SAFE_INTEGER, windowMs }, now);
  }

  /** Counts an attempt before its credentials are checked: throws RateLimitedError past a source's limit, waits past the account's. */
  async admit(kind: AccountKind, account: string, clientAddress: string): Promise<Pass> {
    const keys = KEYS[kind];
    const source = sourceOf(clientAddress);
    const accountHash = accountHashOf(kind, account);
    const address = await this.addressLimiter.hit(`${keys.address}:${source}`);
    const pair = await this.pairLimiter.hit(`${keys.pair}:${account}\u0000${source}`, accountHash);
    const total = await this.accountCounter.hit(`${keys.account}:${account}`, accountHash);
    const knownKeyHash = sha256(`${keys.known}:${account}\u0000${source}`);
    const delayMs = this.delayFor(total.count);
    if (delayMs > 0 && !(await this.store.isLive(this.db, knownKeyHash, new Date(this.now())))) await this.waitOut(source, delayMs);
    return { address, pair, account: total, knownKeyHash };
  }

  /**
   * Right credentials: the attempt is taken back everywhere, the source's
   * earlier failures on the account no longer count, and the source is known
   * to the account from now on. Other sources' failures stay counted.
   */
  async succeeded(pass: Pass): Promise<void> {
    await Promise.all([
      this.addressLimiter.forgive(pass.address),
      this.pairLimiter.reset(pass.pair),
      this.accountCounter.forgive(pass.account),
      this.store.remember(this.db, pass.knownKeyHash, new Date(this.now() + this.options.knownSourceMs)),
    ]);
  }

  /** How long an attempt from an unknown source waits when the account counts `failures` (this attempt included). */
  delayFor(failures: number): number {
    const over = failures - this.options.perAccount;
    if (over <= 0 || this.options.maxDelayMs <= 0) return 0;
    const doublings = Math.min(20, Math.floor((over - 1) / this.options.perSource));
    return Math.min(this.options.maxDelayMs, FIRST_DELAY_MS * 2 ** doublings);
  }

  /** The account's windows that have not ended. */
  async windows(kind: AccountKind, account: string): Promise<AccountWindows> {
    const accountHash = accountHashOf(kind, account);
    const rows = await this.store.ofAccount(this.db, accountHash, new Date(this.now()));
    const own = rows.find((row) => row.key_hash === accountHash);
    return { account: own ?? null, sources: rows.filter((row) => row !== own) };
  }

  /** Lifts every lock of the account: its failures, from every source, start again from nothing. */
  async lift(kind: AccountKind, account: string): Promise<void> {
    await this.store.removeAccount(this.db, accountHashOf(kind, account));
  }

  get limits(): Pick<LoginGuardOptions, 'perSource' | 'perAccount'> {
    return { perSource: this.options.perSource, perAccount: this.options.perAccount };
  }

  secondsLeft(resetAt: Date): number {
    return secondsUntil(resetAt, this.now());
  }

  private async waitOut(source: string, ms: number): Promise<void> {
    // A full waiting room refuses rather than queues: whatever waits holds a request slot.
    if (this.waiting.has(source) || this.waiting.size >= this.options.maxWaiting) throw new RateLimitedError(Math.max(1, Math.ceil(ms / 1000)));
    this.waiting.add(source);
    try {
      await this.wait(ms);
    } finally {
      this.waiting.delete(source);
    }
  }
}

/** The account's own window key, hashed: it also marks every (account, source) window of the account. */
function accountHashOf(kind: AccountKind, account: string): string {
  return sha256(`${KEYS[kind].account}:${account}`);
}
