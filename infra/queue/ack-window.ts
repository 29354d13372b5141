import type { Message } from 'amqplib';

/** What the window needs of an amqplib channel. */
export interface Acknowledger {
  ack(message: Message, allUpTo?: boolean): void;
  nack(message: Message, allUpTo?: boolean, requeue?: boolean): void;
}

export interface AckWindowOptions {
  /** Finished deliveries held back at most: the prefetch must leave room for them. */
  maxHeld: number;
  /**
   * How long a finished delivery may wait for others to be acknowledged with
   * it. A batch older than half of it leaves with the next finished delivery,
   * while the process is awake anyway; the timer is the backstop.
   */
  maxDelayMs: number;
}

interface Entry {
  message: Message;
  finished: boolean;
}

/**
 * Acknowledges a channel's deliveries several at a time. A quorum queue turns
 * every ack frame into an entry of its log (one log write, one wake-up of the
 * broker's threads); one `multiple` ack settles every delivery up to its tag in
 * one entry. Finished deliveries are held until `maxHeld` of them are waiting
 * or the oldest has waited `maxDelayMs`, then the run of finished deliveries at
 * the front goes as one ack and any finished behind an unfinished one go one by
 * one (a `multiple` ack must never cover a delivery still being handled).
 * Holding an ack is safe: a delivery redelivered because its ack never left
 * finds its invocation finished and is a no-op. Requeues (nacks) leave at once.
 * One window per channel; a window dies with its channel.
 */
export class AckWindow {
  /** Unsettled deliveries in the order the channel delivered them (their tags ascend). */
  private entries: Entry[] = [];
  /** When the oldest finished delivery still held finished. */
  private oldestFinishedAt = 0;
  private timer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(
    private readonly channel: Acknowledger,
    private readonly options: AckWindowOptions,
  ) {}

  received(message: Message): void {
    this.entries.push({ message, finished: false });
  }

  /** The delivery was handled: it will be acknowledged with the next batch. */
  finished(message: Message): void {
    const entry = this.entries.find((e) => e.message === message);
    if (!entry || entry.finished) return;
    if (this.held() === 0) this.oldestFinishedAt = Date.now();
    entry.finished = true;
    if (this.due()) this.flush();
    else this.timer ??= setTimeout(() => this.flush(), this.options.maxDelayMs);
  }

  /** The delivery failed: back to the queue now, so its next attempt is not held up. */
  requeue(message: Message): void {
    const index = this.entries.findIndex((e) => e.message === message);
    if (index < 0) return;
    this.entries.splice(index, 1);
    this.write(() => this.channel.nack(message, false, true));
  }

  /** Acknowledges every finished delivery now (before the channel closes). */
  flush(): void {
    this.stopTimer();
    if (this.held() === 0) return;
    let front: Entry | undefined;
    while (this.entries[0]?.finished) front = this.entries.shift();
    const behind = this.entries.filter((e) => e.finished);
    if (behind.length) this.entries = this.entries.filter((e) => !e.finished);
    this.write(() => {
      if (front) this.channel.ack(front.message, true);
      for (const e of behind) this.channel.ack(e.message);
    });
  }

  /** The channel is gone: its tags mean nothing on another, and the broker redelivers what was not acknowledged. */
  close(): void {
    this.closed = true;
    this.stopTimer();
    this.entries = [];
  }

  /** Finished deliveries waiting for their ack (a prefetch's worth at most: counting them is cheap). */
  private held(): number {
    return this.entries.filter((e) => e.finished).length;
  }

  private stopTimer(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private due(): boolean {
    return this.held() >= this.options.maxHeld || Date.now() - this.oldestFinishedAt >= this.options.maxDelayMs / 2;
  }

  private write(frames: () => void): void {
    if (this.closed) return;
    try {
      frames();
    } catch {
      // The channel closed under us (amqplib throws): the broker redelivers, and a
      // redelivered finished invocation is a no-op.
      this.close();
    }
  }
}
