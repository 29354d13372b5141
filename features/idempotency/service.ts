import crypto from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import { isDatabaseUnavailable, type Db } from '../../infra/db/database.js';
import { deleteInBatches } from '../../infra/db/purge.js';
import type { TaskDefinition } from '../../infra/process/scheduler.js';
import { IdempotencyKeyInFlightError, IdempotencyKeyReusedError } from '../../kernel/errors/errors.js';
import type { IdempotencyStore, KeyScope } from './store.js';

export interface IdempotencyOptions {
  /** How long a key's answer is kept (DIDYMA_IDEMPOTENCY_RETENTION_HOURS). */
  retentionMs: number;
  /** How long a duplicate waits for the first request with its key to finish before it is a 409. */
  waitMs: number;
  /** An in-flight claim's lease, renewed every third of it while its request runs. */
  leaseMs: number;
  /** Renewals stop after this long, so a request that never answers cannot hold its key for ever. */
  maxHoldMs: number;
  /** Expired keys are purged this often, in batches of `purgeBatch`. */
  purgeEveryMs: number;
  purgeBatch: number;
}

export const DEFAULT_IDEMPOTENCY_OPTIONS: Omit<IdempotencyOptions, 'retentionMs'> = {
  waitMs: 10_000,
  leaseMs: 30_000,
  maxHoldMs: 15 * 60_000,
  purgeEveryMs: 60_000,
  purgeBatch: 1000,
};

/** An answer as first sent: status and JSON text. */
export interface StoredAnswer {
  status: number;
  body: string;
}

export type Begun = { replay: StoredAnswer; claim?: undefined } | { claim: Claim; replay?: undefined };

/**
 * Whether an answer is kept for the key's retries: only a success, the answer
 * of a request that created something. A failure created nothing to repeat,
 * so it frees the key: a retry runs anew, and keys sent with failing requests
 * (a 404 per key, say) leave no row behind for the retention.
 */
export function isKept(status: number): boolean {
  return status >= 200 && status < 300;
}

/**
 * Idempotency keys (the IETF draft "The Idempotency-Key HTTP Header Field"):
 * the first request with a key claims it in PostgreSQL and runs; a retry with
 * the same key and request gets the first answer, waiting for it while the
 * first still runs; the same key with another request is a 422.
 */
export class IdempotencyService {
  private readonly waiters = new Map<string, Set<() => void>>();
  /** Keys this process holds: their duplicates here wait for the wake-up instead of polling the row. */
  private readonly held = new Map<string, string>();

  constructor(
    private readonly db: Db,
    private readonly store: IdempotencyStore,
    private readonly options: IdempotencyOptions,
    private readonly now: () => number = Date.now,
    private readonly logger?: Logger,
  ) {}

  /** Claims the key for this request, or answers the stored answer of the request that claimed it. */
  async begin(scope: KeyScope, requestHash: string): Promise<Begun> {
    // The wait is real time, whatever clock the keys' ages are read with.
    const deadline = Date.now() + this.options.waitMs;
    let pause = 10;
    for (;;) {
      const now = this.now();
      const holder = crypto.randomUUID();
      const claim = { requestHash, holder, lockedUntil: new Date(now + this.options.leaseMs), now: new Date(now), expiresAt: new Date(now + this.options.retentionMs) };
      if (await this.store.claim(this.db, scope, claim)) {
        this.held.set(nameOf(scope), holder);
        return { claim: new Claim(this, scope, holder) };
      }
      const row = await this.store.read(this.db, scope);
      if (!row) continue; // released or purged since the claim: claim again
      if (row.expires_at.getTime() <= now) {
        await this.store.removeLapsed(this.db, scope, new Date(now));
        continue;
      }
      if (row.request_hash !== requestHash) throw new IdempotencyKeyReusedError();
      if (row.state === 'done') return { replay: { status: row.response_status!, body: row.response_body! } };
      if (row.locked_until !== null && row.locked_until.getTime() <= now) {
        // Its holder stopped renewing (the process died): the key is free again.
        await this.store.removeLapsed(this.db, scope, new Date(now));
        continue;
      }
      const left = deadline - Date.now();
      if (left <= 0) throw new IdempotencyKeyInFlightError();
      // A holder in this process wakes its duplicates; polling then only watches for a lapsed lease.
      await this.settled(scope, Math.min(this.held.has(nameOf(scope)) ? this.options.leaseMs : pause, left));
      pause = Math.min(pause * 2, 250);
    }
  }

  /** Deletes the keys past their retention, a batch at a time; answers how many went. */
  async purgeExpired(): Promise<number> {
    const now = new Date(this.now());
    return deleteInBatches((limit) => this.store.removeExpired(this.db, now, limit), this.options.purgeBatch);
  }

  /** A background task of its own: a purge every `purgeEveryMs` (in any process, each purging on its own turn). */
  purgeTask(): TaskDefinition {
    return {
      name: 'idempotency_key_purge',
      intervalMs: this.options.purgeEveryMs,
      run: async () => {
        const removed = await this.purgeExpired();
        if (removed) this.logger?.debug({ removed }, 'purged expired idempotency keys');
      },
    };
  }

  /**
   * @internal Stores or frees a claim, then wakes this process's duplicates
   * waiting on it. While the database is unavailable, the write of a kept
   * answer is tried again until `until`: not stored, it would let the key
   * lapse, and a retry whose first attempt did the work would do it again.
   * A release is tried once (its lease frees the key anyway): every request
   * refused during an outage has one, and they must not all poll the
   * database meanwhile.
   */
  async settle(scope: KeyScope, holder: string, answer: StoredAnswer | undefined, until: number): Promise<void> {
    try {
      if (!answer || !isKept(answer.status)) {
        await this.store.release(this.db, scope, holder);
        return;
      }
      for (let pause = 50; ; pause = Math.min(pause * 2, 2_000)) {
        try {
          await this.store.complete(this.db, scope, holder, answer.status, answer.body);
          return;
        } catch (error) {
          if (!isDatabaseUnavailable(error) || Date.now() + pause > until) throw error;
          // Unreferenced: a process that is shutting down does not wait for the database to come back.
          await sleep(pause, undefined, { ref: false });
        }
      }
    } finally {
      if (this.held.get(nameOf(scope)) === holder) this.held.delete(nameOf(scope));
      this.wake(scope);
    }
  }

  /** @internal Moves a claim's lease on. */
  async renew(scope: KeyScope, holder: string): Promise<void> {
    await this.store.renew(this.db, scope, holder, new Date(this.now() + this.options.leaseMs));
  }

  get leaseMs(): number {
    return this.options.leaseMs;
  }

  get maxHoldMs(): number {
    return this.options.maxHoldMs;
  }

  /** Resolves after `ms`, or sooner when this process settles the key (other replicas' are seen by polling). */
  private settled(scope: KeyScope, ms: number): Promise<void> {
    const name = nameOf(scope);
    return new Promise((resolve) => {
      const waiters = this.waiters.get(name) ?? new Set();
      this.waiters.set(name, waiters);
      const done = () => {
        clearTimeout(timer);
        waiters.delete(done);
        if (!waiters.size) this.waiters.delete(name);
        resolve();
      };
      const timer = setTimeout(done, ms);
      waiters.add(done);
    });
  }

  private wake(scope: KeyScope): void {
    for (const done of [...(this.waiters.get(nameOf(scope)) ?? [])]) done();
  }
}

const nameOf = (s: KeyScope) => JSON.stringify([s.workspaceId, s.principal, s.operation, s.key]);

/**
 * The key held by the request that claimed it: settled once, with its answer
 * or without. Its lease is renewed until the settlement is stored, so a
 * database outage between the work and its answer's write does not free it.
 */
export class Claim {
  private done = false;
  private readonly renewal: NodeJS.Timeout;
  private readonly started = Date.now();

  constructor(
    private readonly service: IdempotencyService,
    private readonly scope: KeyScope,
    private readonly holder: string,
  ) {
    const started = this.started;
    this.renewal = setInterval(() => {
      if (Date.now() - started > service.maxHoldMs) return clearInterval(this.renewal);
      service.renew(scope, holder).catch(() => undefined); // a missed renewal only shortens the lease
    }, Math.max(1, Math.floor(service.leaseMs / 3)));
    this.renewal.unref();
  }

  /** Keeps the answer for the key's retries when it is one to keep (`isKept`), else frees the key. */
  finish(answer: StoredAnswer): Promise<void> {
    return this.settle(answer);
  }

  /** Frees the key: the request did not get an answer worth repeating. */
  release(): Promise<void> {
    return this.settle(undefined);
  }

  private async settle(answer: StoredAnswer | undefined): Promise<void> {
    if (this.done) return;
    this.done = true;
    try {
      await this.service.settle(this.scope, this.holder, answer, this.started + this.service.maxHoldMs);
    } finally {
      clearInterval(this.renewal);
    }
  }
}
