/**
 * The work queue between the API (through the outbox relay) and the executors.
 * A message carries only an invocation id. Two implementations with the same
 * semantics: RabbitMQ (production) and an in-process queue (embedded default).
 */
export interface WorkQueue {
  /** Whether published messages outlive this process (a broker), or die with it (the in-process queue). */
  readonly durable: boolean;
  /** Resolves once the broker has confirmed every id (persisted). */
  publish(ids: string[]): Promise<void>;
  /**
   * Delivers ids to `handle`, at most `concurrency` at a time. The message is
   * acknowledged only after `handle` resolves; when it throws, the message is
   * requeued until the delivery limit, then dead-lettered.
   */
  consume(handle: (id: string, delivery: Delivery) => Promise<void>, concurrency: number): Promise<Consumer>;
  /** Whether the broker connection is currently up (readiness). */
  healthy(): boolean;
  close(): Promise<void>;
}

export interface Delivery {
  /** 1 for the first delivery. */
  attempt: number;
}

export interface Consumer {
  /** Stops taking new messages; resolves when in-flight handlers have finished. */
  stop(): Promise<void>;
}

/** How many deliveries a message gets before it goes to the dead-letter queue. */
export const DELIVERY_LIMIT = 5;
