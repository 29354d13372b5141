import amqp from 'amqplib';
import knexFactory from 'knex';
import { percentile } from './load.js';

// The physical floors under the platform's figures on this machine: what one
// database round trip and one durable broker hop cost by themselves.

/** `select 1` round trips from one Node process: `clients` loops over a pool of `pool` (the platform's default 10). */
export async function postgresRoundTrips(url: string, options: { clients: number; pool: number; durationMs: number }) {
  const db = knexFactory({ client: 'pg', connection: url, pool: { min: options.pool, max: options.pool } });
  try {
    await db.raw('select 1');
    const latencies: number[] = [];
    const until = Date.now() + options.durationMs;
    const started = performance.now();
    await Promise.all(
      Array.from({ length: options.clients }, async () => {
        while (Date.now() < until) {
          const t0 = performance.now();
          await db.raw('select 1');
          latencies.push(performance.now() - t0);
        }
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    latencies.sort((a, b) => a - b);
    return { rps: latencies.length / seconds, p50: percentile(latencies, 50), p99: percentile(latencies, 99) };
  } finally {
    await db.destroy();
  }
}

/** One persistent message at a time through a quorum queue like the platform's: publish → confirm, and publish → delivery. */
export async function brokerHop(url: string, queue: string, messages: number) {
  const connection = await amqp.connect(url, { noDelay: true }); // as the platform connects
  try {
    const publisher = await connection.createConfirmChannel();
    await publisher.assertQueue(queue, { durable: true, arguments: { 'x-queue-type': 'quorum' } });
    const consumer = await connection.createChannel();
    let delivered: () => void = () => undefined;
    await consumer.consume(queue, (message) => {
      if (message) {
        consumer.ack(message);
        delivered();
      }
    });
    const confirm: number[] = [];
    const delivery: number[] = [];
    for (let i = 0; i < messages; i++) {
      const t0 = performance.now();
      const arrived = new Promise<void>((resolve) => (delivered = resolve)).then(() => delivery.push(performance.now() - t0));
      publisher.sendToQueue(queue, Buffer.from(String(i)), { persistent: true });
      await publisher.waitForConfirms();
      confirm.push(performance.now() - t0);
      await arrived;
    }
    await publisher.deleteQueue(queue);
    confirm.sort((a, b) => a - b);
    delivery.sort((a, b) => a - b);
    return { confirm: { p50: percentile(confirm, 50), p99: percentile(confirm, 99) }, delivery: { p50: percentile(delivery, 50), p99: percentile(delivery, 99) } };
  } finally {
    await connection.close().catch(() => undefined);
  }
}
