import { setTimeout as sleep } from 'node:timers/promises';
import amqp, { type ConfirmChannel, type ChannelModel, type ConsumeMessage } from 'amqplib';
import type { Logger } from 'pino';
import type { Consumer, Delivery, WorkQueue } from './queue.js';
import { DELIVERY_LIMIT } from './queue.js';
import { AckWindow } from './ack-window.js';

export interface RabbitOptions {
  url: string;
  queue: string;
  logger: Logger;
  /** Upper bound of the reconnect backoff. */
  maxBackoffMs?: number;
}

type Handler = (id: string, delivery: Delivery) => Promise<void>;

/** The queue a work queue's dead letters go to. */
export const deadLetterQueueOf = (queue: string) => `${queue}.dead`;

/**
 * RabbitMQ through amqplib: a durable quorum queue with a delivery limit and a
 * dead-letter queue, persistent messages, publisher confirms, manual acks
 * (several to a frame), prefetch = concurrency, and reconnection with
 * exponential backoff. Consumers re-subscribe by themselves after a reconnect.
 */
export class RabbitQueue implements WorkQueue {
  readonly durable = true;
  private connection: ChannelModel | undefined;
  private publishChannel: ConfirmChannel | undefined;
  private connecting: Promise<void> | undefined;
  private closed = false;
  private readonly consumers = new Set<RabbitConsumer>();

  constructor(private readonly options: RabbitOptions) {}

  get queueName(): string {
    return this.options.queue;
  }

  get deadLetterQueue(): string {
    return deadLetterQueueOf(this.options.queue);
  }

  async publish(ids: string[]): Promise<void> {
    const channel = await this.channel();
    // Each message's own confirm: concurrent publishers do not wait on one another's messages.
    await Promise.all(
      ids.map(
        (id) =>
          new Promise<void>((resolve, reject) => {
            channel.sendToQueue(this.options.queue, Buffer.from(id), { persistent: true, contentType: 'text/plain', messageId: id }, (error: unknown) =>
              error ? reject(error instanceof Error ? error : new Error(`RabbitMQ did not confirm message ${id}`)) : resolve(),
            );
          }),
      ),
    );
  }

  async consume(handle: Handler, concurrency: number): Promise<Consumer> {
    const consumer = new RabbitConsumer(this, handle, concurrency, this.options.logger);
    this.consumers.add(consumer);
    await this.channel().then(
      () => consumer.subscribe(),
      // The broker may start after its consumers (pods of one release): keep trying, then subscribe.
      () => void this.reconnect(),
    );
    return consumer;
  }

  healthy(): boolean {
    return Boolean(this.connection && this.publishChannel);
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.consumers].map((c) => c.stop()));
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
  forget(consumer: RabbitConsumer): void {
    this.consumers.delete(consumer);
  }

  private async channel(): Promise<ConfirmChannel> {
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
    const connection = await amqp.connect(this.options.url, { timeout: 5000, noDelay: true });
    connection.on('error', (error) => this.options.logger.warn({ err: error }, 'rabbitmq connection error'));
    connection.on('close', () => this.lost(connection));
    const channel = await connection.createConfirmChannel();
    channel.on('error', (error) => this.options.logger.warn({ err: error }, 'rabbitmq channel error'));
    await declareTopology(channel, this.options.queue, this.deadLetterQueue);
    this.connection = connection;
    this.publishChannel = channel;
    this.options.logger.info({ queue: this.options.queue }, 'rabbitmq connected');
    for (const consumer of this.consumers) await consumer.subscribe().catch(() => undefined);
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

async function declareTopology(channel: ConfirmChannel, queue: string, deadLetterQueue: string): Promise<void> {
  await channel.assertQueue(deadLetterQueue, { durable: true, arguments: { 'x-queue-type': 'quorum' } });
  await channel.assertQueue(queue, {
    durable: true,
    arguments: {
      'x-queue-type': 'quorum',
      'x-delivery-limit': DELIVERY_LIMIT - 1,
      'x-dead-letter-exchange': '',
      'x-dead-letter-routing-key': deadLetterQueue,
    },
  });
}

/**
 * How long a finished delivery's ack may be held for others to go with it
 * (infra/queue/ack-window.ts): a quorum queue logs each ack frame, so fewer
 * frames cost the broker less.
 */
const ACK_DELAY_MS = 20;
/** Held acks take prefetch credit: a quarter of it at most. */
const heldAcksOf = (prefetch: number) => Math.max(1, Math.floor(prefetch / 4));

class RabbitConsumer implements Consumer {
  private readonly inFlight = new Set<Promise<void>>();
  private stopped = false;
  private tag: { channel: import('amqplib').Channel; consumerTag: string; acks: AckWindow } | undefined;
  /** The connection this consumer is subscribed on. */
  private subscribedOn: ChannelModel | undefined;

  constructor(
    private readonly queue: RabbitQueue,
    private readonly handle: Handler,
    private readonly concurrency: number,
    private readonly logger: Logger,
  ) {}

  async subscribe(): Promise<void> {
    if (this.stopped) return;
    const connection = await this.queue.open();
    // A first connection subscribes every consumer it knows, and consume() subscribes too: once per connection,
    // or a second channel would consume past the prefetch and go on after stop() cancelled the other one.
    if (this.subscribedOn === connection) return;
    this.subscribedOn = connection;
    const channel = await connection.createChannel().catch((error: unknown) => {
      this.subscribedOn = undefined;
      throw error;
    });
    channel.on('error', (error) => this.logger.warn({ err: error }, 'rabbitmq consumer channel error'));
    const acks = new AckWindow(channel, { maxHeld: heldAcksOf(this.concurrency), maxDelayMs: ACK_DELAY_MS });
    channel.on('close', () => acks.close());
    await channel.prefetch(this.concurrency);
    const { consumerTag } = await channel.consume(this.queue.queueName, (message) => {
      if (message) this.deliver(acks, message);
    });
    this.tag = { channel, consumerTag, acks };
  }

  private deliver(acks: AckWindow, message: ConsumeMessage): void {
    const id = message.content.toString('utf8');
    // Quorum queues count earlier deliveries in x-delivery-count.
    const attempt = Number(message.properties.headers?.['x-delivery-count'] ?? 0) + 1;
    acks.received(message);
    const run = this.handle(id, { attempt }).then(
      () => acks.finished(message),
      (error: unknown) => {
        this.logger.warn({ err: error, invocationId: id, attempt }, 'handler failed; message returned to the queue');
        acks.requeue(message);
      },
    );
    const tracked = run.catch(() => undefined).finally(() => this.inFlight.delete(tracked));
    this.inFlight.add(tracked);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.queue.forget(this);
    if (this.tag) await this.tag.channel.cancel(this.tag.consumerTag).catch(() => undefined);
    await Promise.all(this.inFlight);
    this.tag?.acks.flush();
    await this.tag?.channel.close().catch(() => undefined);
  }
}

