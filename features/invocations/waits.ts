import type { SessionEventReaders } from './session-readers.js';
import type { Snapshot } from './snapshot.js';
import type { InvocationStatus } from './store.js';

/** How many requests may wait for their invocation at once in one server process. */
export interface WaitLimits {
  perWorkspace: number;
  perProcess: number;
}

/** The statuses an invocation stays in until a client re-runs it. */
const FINAL: ReadonlySet<InvocationStatus> = new Set(['COMPLETED', 'ERROR', 'CANCELLED']);

export const isFinal = (status: InvocationStatus): boolean => FINAL.has(status);

/** How often the process's waits look whether the server is draining (one timer for all of them). */
const DRAIN_CHECK_MS = 250;

/** Why a wait ended: its invocation finished, or it was given up (deadline, drain, client gone, reader failed). */
export type WaitEnd = 'finished' | 'given_up';

/**
 * Requests that wait for their invocation to finish (`Prefer: wait`),
 * counted per workspace and in all apart from the request slots: past a
 * bound a request is not refused but answered at once, as without the
 * preference, so no workspace's waits can take the room of another's, and
 * nothing is lost. A wait follows its session's events through the
 * process's session readers, so the waits and streams of one session share
 * one database read per change; a draining server ends every wait at once.
 */
export class PredictionWaits {
  private readonly byWorkspace = new Map<number, number>();
  private readonly ends = new Set<() => void>();
  private total = 0;
  private drainCheck: NodeJS.Timeout | undefined;

  constructor(
    private readonly readers: SessionEventReaders,
    private readonly limits: WaitLimits,
    private readonly stopping: () => boolean,
  ) {}

  /**
   * A slot for one more waiting request of `workspaceId`, given back by the
   * returned function (once, however often it is called); undefined past
   * the workspace's or the process's bound, or while the server drains.
   */
  take(workspaceId: number): (() => void) | undefined {
    if (this.stopping() || this.total >= this.limits.perProcess || (this.byWorkspace.get(workspaceId) ?? 0) >= this.limits.perWorkspace) return undefined;
    this.byWorkspace.set(workspaceId, (this.byWorkspace.get(workspaceId) ?? 0) + 1);
    this.total += 1;
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      const left = this.byWorkspace.get(workspaceId)! - 1;
      if (left > 0) this.byWorkspace.set(workspaceId, left);
      else this.byWorkspace.delete(workspaceId);
      this.total -= 1;
    };
  }

  /**
   * Resolves `finished` once the session's events after `from` show
   * `invocationId` COMPLETED, ERROR or CANCELLED; `given_up` after `ms`, when
   * the server drains, when `gone` aborts (the client left) or when the
   * session's reader fails.
   */
  until(sessionId: string, from: Snapshot, invocationId: string, ms: number, gone: AbortSignal): Promise<WaitEnd> {
    return new Promise((resolve) => {
      let ended = false;
      const end = (how: WaitEnd) => {
        if (ended) return;
        ended = true;
        clearTimeout(deadline);
        gone.removeEventListener('abort', giveUp);
        this.ends.delete(giveUp);
        if (!this.ends.size) this.stopDrainCheck();
        stop();
        resolve(how);
      };
      const giveUp = () => end('given_up');
      const deadline = setTimeout(giveUp, ms);
      gone.addEventListener('abort', giveUp);
      this.ends.add(giveUp);
      this.startDrainCheck();
      const stop = this.readers.follow(sessionId, from, {
        deliver: ({ items }) => {
          if (items.some((event) => event.invocation_id === invocationId && FINAL.has(event.status))) end('finished');
        },
        fail: giveUp,
      });
      if (gone.aborted || this.stopping()) giveUp();
    });
  }

  /** Requests waiting now: what the tests see the waits' footprint in. */
  get waiting(): number {
    return this.total;
  }

  private startDrainCheck(): void {
    if (this.drainCheck) return;
    this.drainCheck = setInterval(() => {
      if (this.stopping()) for (const giveUp of [...this.ends]) giveUp();
    }, DRAIN_CHECK_MS);
    this.drainCheck.unref();
  }

  private stopDrainCheck(): void {
    clearInterval(this.drainCheck);
    this.drainCheck = undefined;
  }
}
