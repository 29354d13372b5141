/**
 * Wake-ups between the processes that queue work and the executors that run
 * it. A wake-up names no invocation: executors claim from PostgreSQL in fair
 * order, so the broker only says that work was committed and how much. A
 * lost wake-up delays work by at most an executor's poll; it loses nothing.
 * Two implementations with the same semantics: RabbitMQ (production) and an
 * in-process queue (embedded default).
 */
export interface WorkQueue {
  /** Sends a wake-up to one listener (round robin); nothing waits for the broker to keep it. */
  ring(ring: Ring): void;
  /** Calls `onRing` for each wake-up this listener receives. */
  listen(onRing: (ring: Ring) => void): Promise<Listener>;
  /** Whether the broker connection is currently up (readiness). */
  healthy(): boolean;
  close(): Promise<void>;
}

/** One wake-up: how many runs were queued, and how many listeners passed it on already. */
export interface Ring {
  count: number;
  hops: number;
}

export interface Listener {
  /** Stops receiving wake-ups. */
  stop(): Promise<void>;
}

/** A wake-up as it travels: a small JSON object, read back leniently (an older sender's message counts as one run). */
export const encodeRing = (ring: Ring): Buffer => Buffer.from(JSON.stringify(ring));

export function decodeRing(content: Buffer): Ring {
  try {
    const { count, hops } = JSON.parse(content.toString('utf8')) as Partial<Ring>;
    return { count: positiveInteger(count, 1), hops: positiveInteger(hops, 0) };
  } catch {
    return { count: 1, hops: 0 };
  }
}

const positiveInteger = (value: unknown, fallback: number) => (Number.isSafeInteger(value) && (value as number) >= 0 ? (value as number) : fallback);
