import { OverloadedError, QuotaExceededError } from '../../kernel/errors/errors.js';
import type { Principal } from '../auth/principal.js';

/** How many event streams may be open at once in one server process. */
export interface StreamLimits {
  perUser: number;
  perWorkspace: number;
  perProcess: number;
}

/** Streams end only when their clients leave: a refused client is asked to wait this long before it tries again. */
const RETRY_AFTER_SECONDS = 10;

/**
 * The event streams open in this process, counted per user, per workspace
 * and in all, apart from the request slots (DIDYMA_MAX_IN_FLIGHT): a stream
 * lives for minutes, so streams have slots of their own and no tenant's
 * streams can take the capacity that requests, or other tenants' streams,
 * need. Counted per process: each replica holds its own streams.
 */
export class StreamSlots {
  private readonly byUser = new Map<number, number>();
  private readonly byWorkspace = new Map<number, number>();
  private total = 0;

  constructor(private readonly limits: StreamLimits) {}

  /**
   * A slot for one more stream of `principal`, or 429 over the user's or the
   * workspace's cap, or 503 when the process holds its maximum; the
   * returned function gives it back (once, however often it is called).
   */
  take(principal: Principal): () => void {
    const user = principal.user.id;
    const workspace = principal.workspace!.id;
    if ((this.byUser.get(user) ?? 0) >= this.limits.perUser) {
      throw new QuotaExceededError(`You have ${this.limits.perUser} event streams open on this server, the most one user may. Close one, or retry later.`, RETRY_AFTER_SECONDS);
    }
    if ((this.byWorkspace.get(workspace) ?? 0) >= this.limits.perWorkspace) {
      throw new QuotaExceededError(`The workspace has ${this.limits.perWorkspace} event streams open on this server, the most one workspace may. Close one, or retry later.`, RETRY_AFTER_SECONDS);
    }
    if (this.total >= this.limits.perProcess) {
      throw new OverloadedError(`This server holds ${this.limits.perProcess} event streams, its maximum. Retry later.`, RETRY_AFTER_SECONDS);
    }
    add(this.byUser, user, 1);
    add(this.byWorkspace, workspace, 1);
    this.total += 1;
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      add(this.byUser, user, -1);
      add(this.byWorkspace, workspace, -1);
      this.total -= 1;
    };
  }

  get open(): number {
    return this.total;
  }
}

function add(counts: Map<number, number>, key: number, delta: number): void {
  const count = (counts.get(key) ?? 0) + delta;
  if (count > 0) counts.set(key, count);
  else counts.delete(key);
}
