import crypto from 'node:crypto';
import type { Logger } from 'pino';
import type { Db } from '../../infra/db/database.js';
import type { SessionsStore } from './store.js';
import { invocationState, QueueFullError, type AppendedInvocation } from './state.js';

/** A shadow runs after every other queued invocation of its workspace: the lowest priority. */
export const SHADOW_PRIORITY = 0;

/** Why a shadow invocation was not queued. */
export type ShadowDrop = 'queue_full' | 'failed';

/**
 * Copies an appended prediction to the shadow sessions of its session, as
 * QUEUED invocations through the one append (`invocationState.appendQueued`)
 * at SHADOW_PRIORITY, each naming its primary (`shadow_of`). Called after the
 * primary committed and was announced, so a shadow never delays or fails it:
 * a shadow the workspace's `max_queued` refuses, or any other failure, is
 * dropped, counted and logged.
 */
export class ShadowDispatch {
  /** Shadow invocations dropped by this process, by reason. */
  readonly dropped: Record<ShadowDrop, number> = { queue_full: 0, failed: 0 };

  constructor(
    private readonly db: Db,
    private readonly sessions: Pick<SessionsStore, 'shadowsOf'>,
    private readonly logger: Pick<Logger, 'warn'>,
  ) {}

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
