import type { Consumer, Delivery, WorkQueue } from './queue.js';
import { DELIVERY_LIMIT } from './queue.js';

interface Message {
  id: string;
  attempt: number;
}

type Handler = (id: string, delivery: Delivery) => Promise<void>;

/**
 * In-process queue with RabbitMQ's semantics within one process: ack after the
 * handler, requeue on failure, dead-letter after the delivery limit. Messages
 * live in memory; the outbox relay republishes anything unfinished after a restart.
 */
export class MemoryQueue implements WorkQueue {
  readonly durable = false;
  private readonly ready: Message[] = [];
  private readonly consumers = new Set<MemoryConsumer>();
  readonly deadLetters: string[] = [];

  async publish(ids: string[]): Promise<void> {
    for (const id of ids) this.ready.push({ id, attempt: 1 });
    this.dispatch();
  }

  async consume(handle: Handler, concurrency: number): Promise<Consumer> {
    const consumer = new MemoryConsumer(handle, concurrency, this);
    this.consumers.add(consumer);
    this.dispatch();
    return consumer;
  }

  healthy(): boolean {
    return true;
  }

  async close(): Promise<void> {
    await Promise.all([...this.consumers].map((c) => c.stop()));
  }

  /** @internal */
  take(): Message | undefined {
    return this.ready.shift();
  }

  /** @internal */
  settle(message: Message, ok: boolean): void {
    if (!ok) {
      if (message.attempt >= DELIVERY_LIMIT) this.deadLetters.push(message.id);
      else this.ready.push({ id: message.id, attempt: message.attempt + 1 });
    }
    this.dispatch();
  }

  /** @internal */
  forget(consumer: MemoryConsumer): void {
    this.consumers.delete(consumer);
  }

  private dispatch(): void {
    for (const consumer of this.consumers) consumer.pull();
  }
}

class MemoryConsumer implements Consumer {
  private inFlight = new Set<Promise<void>>();
  private stopped = false;

  constructor(
    private readonly handle: Handler,
    private readonly concurrency: number,
    private readonly queue: MemoryQueue,
  ) {}

  pull(): void {
    while (!this.stopped && this.inFlight.size < this.concurrency) {
      const message = this.queue.take();
      if (!message) return;
      const run = this.handle(message.id, { attempt: message.attempt }).then(
        () => true,
        () => false,
      );
      const tracked = run.then((ok) => {
        this.inFlight.delete(tracked);
        this.queue.settle(message, ok);
      });
      this.inFlight.add(tracked);
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.queue.forget(this);
    await Promise.all(this.inFlight);
  }
}
