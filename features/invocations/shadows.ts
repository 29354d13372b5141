import crypto from 'node:crypto';
import type { Logger } from 'pino';
import type { Db } from '../../infra/db/database.js';
import type { SessionsStore } from './store.js';
import { invocationState, QueueFullError, type AppendedInvocation } from './state.js';

/** A shadow runs after every other queued invocation of its workspace: the lowest priority. */
export const SHADOW_PRIORITY = 0;

/**
 * Copies started and not yet ended in one process: past it a prediction's copy
 * is dropped at once, so copies the database cannot keep up with never pile
 * up in memory nor crowd the primaries out of the connection pool.
 */
export const MAX_COPIES_IN_FLIGHT = 256;

/** Why a shadow invocation was not queued. */
export type ShadowDrop = 'queue_full' | 'backlog' | 'failed';

/**
 * Copies an appended prediction to the shadow sessions of its session, as
 * QUEUED invocations through the one append (`invocationState.appendQueued`)
 * at SHADOW_PRIORITY, each naming its primary (`shadow_of`). Started after the
 * primary committed and was announced, and not awaited by its POST
 * (`copyAfter`), so a shadow never delays or fails it: a shadow the
 * workspace's `max_queued` refuses, or any other failure, is dropped, counted
 * and logged.
 */
export class ShadowDispatch {
  /** Shadow invocations dropped by this process, by reason. */
  readonly dropped: Record<ShadowDrop, number> = { queue_full: 0, backlog: 0, failed: 0 };
  private readonly copying = new Set<Promise<void>>();
  /** The copy started last for each primary session, the next one's turn. */
  private readonly lastCopyOf = new Map<string, Promise<void>>();

  constructor(
    private readonly db: Db,
    private readonly sessions: Pick<SessionsStore, 'shadowsOf'>,
    private readonly logger: Pick<Logger, 'warn'>,
    private readonly maxInFlight = MAX_COPIES_IN_FLIGHT,
  ) {}

  /**
   * Copies `primary` without the caller waiting for it (a read and an append
   * more on the POST's path), then calls `queued` when any shadow was
   * queued. A session's copies run one after another, so its shadows keep
   * the order its predictions were answered in by this process.
   */
  copyAfter(primary: AppendedInvocation, queued: () => void): void {
    if (this.copying.size >= this.maxInFlight) {
      this.dropped.backlog += 1;
      this.logger.warn({ invocation_id: primary.id, reason: 'backlog' }, 'shadow invocations dropped');
      return;
    }
    const session = primary.session_id;
    const copy: Promise<void> = (this.lastCopyOf.get(session) ?? Promise.resolve())
      .then(() => this.copy(primary))
      .then((count) => (count > 0 ? queued() : undefined))
      .catch((error: unknown) => this.logger.warn({ err: error, invocation_id: primary.id }, 'shadow invocations not announced'))
      .finally(() => {
        this.copying.delete(copy);
        if (this.lastCopyOf.get(session) === copy) this.lastCopyOf.delete(session);
      });
    this.copying.add(copy);
    this.lastCopyOf.set(session, copy);
  }

  /** Resolves once every copy started so far has ended: the platform awaits it before closing its pool. */
  async settled(): Promise<void> {
    await Promise.all(this.copying);
  }

  /** How many shadow invocations were queued for `primary` (0 when they were dropped). */
  async copy(primary: AppendedInvocation): Promise<number> {
    try {
      const shadows = await this.sessions.shadowsOf(this.db, primary.session_id);
      if (!shadows.length) return 0;
      const rows = shadows.map((session) => ({
        id: crypto.randomUUID(),
        workspace_id: session.workspace_id,
        session_id: session.id,
        user_id: session.user_id,
        model_id: session.model_id,
        type: primary.type,
        request_type: primary.request_type,
        body: primary.body,
        model_key: '',
        related_to: null,
        with_explanation: false,
        output_storage_key: null,
        priority: SHADOW_PRIORITY,
        traceparent: primary.traceparent,
        shadow_of: primary.id,
      }));
      return (await invocationState.appendQueued(this.db, rows)).filter(Boolean).length;
    } catch (error) {
      const reason: ShadowDrop = error instanceof QueueFullError ? 'queue_full' : 'failed';
      this.dropped[reason] += 1;
      this.logger.warn({ err: error, invocation_id: primary.id, reason }, 'shadow invocations dropped');
      return 0;
    }
  }
}
