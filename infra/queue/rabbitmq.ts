import { setTimeout as sleep } from 'node:timers/promises';
import amqp, { type Channel, type ChannelModel } from 'amqplib';
import type { Logger } from 'pino';
import { decodeRing, encodeRing, type Listener, type Ring, type WorkQueue } from './queue.js';

export interface RabbitOptions {
  url: string;
  /** The name the wake-up queue derives from (`wakeupQueueOf`). */
  queue: string;
  logger: Logger;
  /** Upper bound of the reconnect backoff. */
  maxBackoffMs?: number;
  /** PEM of the CA that signed the broker's certificate (amqps://); the host name is checked as well. */
  ca?: string;
}

/** The broker queue of executor wake-ups for a configured queue name. */
export const wakeupQueueOf = (queue: string) => `${queue}.wakeups`;

/**
 * Wake-ups nobody takes (no executor is running) are kept up to this many, the
 * oldest dropped first: any one of them makes the executor that takes it claim,
 * and an executor claims at start anyway.
 */
const MAX_WAITING_RINGS = 1000;

/**
 * RabbitMQ through amqplib: one classic queue of wake-ups, transient messages
 * without publisher confirms, consumed without acks (a wake-up the broker
 * loses costs an executor's poll, never work), and reconnection with
 * exponential backoff. Listeners subscribe again by themselves after a reconnect.
 */
export class RabbitQueue implements WorkQueue {
  private connection: ChannelModel | undefined;
  private publishChannel: Channel | undefined;
  private connecting: Promise<void> | undefined;
  private closed = false;
  private readonly listeners = new Set<RabbitListener>();

  constructor(private readonly options: RabbitOptions) {}

  get queueName(): string {
    return wakeupQueueOf(this.options.queue);
  }

  ring(ring: Ring): void {
    if (!this.publishChannel) {
      void this.channel().catch(() => undefined); // reconnects; this wake-up is left to the executors' poll
      return;
    }
    this.publishChannel.sendToQueue(this.queueName, encodeRing(ring), { persistent: false, contentType: 'application/json' });
  }

  async listen(onRing: (ring: Ring) => void): Promise<Listener> {
    const listener = new RabbitListener(this, onRing, this.options.logger);
    this.listeners.add(listener);
    await this.channel().then(
      () => listener.subscribe(),
      // The broker may start after its listeners (pods of one release): keep trying, then subscribe.
      () => void this.reconnect(),
    );
    return listener;
  }

  healthy(): boolean {
    return Boolean(this.connection && this.publishChannel);
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.listeners].map((listener) => listener.stop()));
    await this.connection?.close().catch(() => undefined);
    this.connection = undefined;
    this.publishChannel = undefined;
  }

  /** @internal the connection, (re)opened on demand. */
  async open(): Promise<ChannelModel> {
    await this.channel();
    return this.connection!;
  }

  /** @internal */
  forget(listener: RabbitListener): void {
    this.listeners.delete(listener);
  }

  private async channel(): Promise<Channel> {
    if (this.publishChannel) return this.publishChannel;
    this.connecting ??= this.connect().finally(() => {
      this.connecting = undefined;
    });
    await this.connecting;
    if (!this.publishChannel) throw new Error('RabbitMQ is not connected.');
    return this.publishChannel;
  }

  private async connect(): Promise<void> {
    if (this.closed) throw new Error('The queue is closed.');
    // noDelay: amqplib writes a publish as several frames; with Nagle on, the
    // broker's delayed ACK holds the last one back and every hop costs ~40 ms.
    const connection = await amqp.connect(this.options.url, { timeout: 5000, noDelay: true, ...(this.options.ca ? { ca: [this.options.ca] } : {}) });
    connection.on('error', (error) => this.options.logger.warn({ err: error }, 'rabbitmq connection error'));
    connection.on('close', () => this.lost(connection));
    const channel = await connection.createChannel();
    channel.on('error', (error) => this.options.logger.warn({ err: error }, 'rabbitmq channel error'));
    await channel.assertQueue(this.queueName, { durable: true, arguments: { 'x-queue-type': 'classic', 'x-max-length': MAX_WAITING_RINGS } });
    this.connection = connection;
    this.publishChannel = channel;
    this.options.logger.info({ queue: this.queueName }, 'rabbitmq connected');
    for (const listener of this.listeners) await listener.subscribe().catch(() => undefined);
  }

  private lost(connection: ChannelModel): void {
    if (this.connection !== connection) return;
    this.connection = undefined;
    this.publishChannel = undefined;
    if (this.closed) return;
    this.options.logger.warn('rabbitmq connection lost; reconnecting');
    void this.reconnect();
  }

  private async reconnect(): Promise<void> {
    let delay = 200;
    while (!this.closed && !this.connection) {
      try {
        await this.channel();
      } catch {
        await sleep(delay + Math.random() * delay);
        delay = Math.min(delay * 2, this.options.maxBackoffMs ?? 10_000);
      }
    }
  }
}

class RabbitListener implements Listener {
  private stopped = false;
  private tag: { channel: Channel; consumerTag: string } | undefined;
  /** The connection this listener is subscribed on. */
  private subscribedOn: ChannelModel | undefined;

  constructor(
    private readonly queue: RabbitQueue,
    private readonly onRing: (ring: Ring) => void,
    private readonly logger: Logger,
  ) {}

  async subscribe(): Promise<void> {
    if (this.stopped) return;
    const connection = await this.queue.open();
    // A first connection subscribes every listener it knows, and listen() subscribes too: once per connection.
    if (this.subscribedOn === connection) return;
    this.subscribedOn = connection;
    const channel = await connection.createChannel().catch((error: unknown) => {
      this.subscribedOn = undefined;
      throw error;
    });
    channel.on('error', (error) => this.logger.warn({ err: error }, 'rabbitmq listener channel error'));
    const { consumerTag } = await channel.consume(
      this.queue.queueName,
      (message) => {
        if (message && !this.stopped) this.onRing(decodeRing(message.content));
      },
      { noAck: true },
    );
    this.tag = { channel, consumerTag };
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.queue.forget(this);
    if (this.tag) await this.tag.channel.cancel(this.tag.consumerTag).catch(() => undefined);
    await this.tag?.channel.close().catch(() => undefined);
  }
}
