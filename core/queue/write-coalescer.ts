import type { Writable } from 'node:stream';
import type { ChannelModel } from 'amqplib';

const coalescers = new WeakMap<ChannelModel, () => void>();

/**
 * amqplib writes every frame (an ack, a publish) to the socket as it comes:
 * one system call each, and one wake-up of the broker each. The function
 * returned here corks the connection's socket for the rest of the current
 * event-loop turn, so the frames of a burst (the acks of a completion batch,
 * the publishes of an append batch) leave in one write. One per connection;
 * a no-op if amqplib's socket is not where this expects it.
 */
export function writeCoalescer(connection: ChannelModel): () => void {
  let coalesce = coalescers.get(connection);
  if (coalesce) return coalesce;
  const socket = (connection as unknown as { connection?: { stream?: Writable } }).connection?.stream;
  let corked = false;
  coalesce =
    socket && typeof socket.cork === 'function'
      ? () => {
          if (corked) return;
          corked = true;
          socket.cork();
          setImmediate(() => {
            corked = false;
            socket.uncork();
          });
        }
      : () => undefined;
  coalescers.set(connection, coalesce);
  return coalesce;
}
