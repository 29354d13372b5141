import type { Writable } from 'node:stream';
import type { ChannelModel } from 'amqplib';

const coalescers = new WeakMap<ChannelModel, () => void>();

/**
 * amqplib writes every frame (an ack, a publish) to the socket as it comes:
 * one system call each, and one wake-up of the broker each. Channel frames
 * reach the socket through amqplib's multiplexer, in a pass it runs on a later
 * `setImmediate`, so each pass is corked: the frames of a burst (the acks of a
 * completion batch, the publishes of an append batch) leave in one write. The
 * function returned here also corks the socket for the rest of the current
 * event-loop turn, for frames written to it directly. One per connection; a
 * no-op if amqplib's socket or multiplexer is not where this expects it.
 */
export function writeCoalescer(connection: ChannelModel): () => void {
  let coalesce = coalescers.get(connection);
  if (coalesce) return coalesce;
  const inner = (connection as unknown as { connection?: { stream?: Writable; muxer?: Muxer } }).connection;
  const socket = typeof inner?.stream?.cork === 'function' ? inner.stream : undefined;
  if (socket) corkEachPass(inner?.muxer, socket);
  coalesce = socket ? corkForThisTurn(socket) : () => undefined;
  coalescers.set(connection, coalesce);
  return coalesce;
}

function corkForThisTurn(socket: Writable): () => void {
  let corked = false;
  return () => {
    if (corked) return;
    corked = true;
    socket.cork();
    setImmediate(() => {
      corked = false;
      socket.uncork();
    });
  };
}

interface Muxer {
  _readIncoming?: () => void;
}

/** Wraps the multiplexer's pass (it writes every channel's pending frames) in one cork. */
function corkEachPass(muxer: Muxer | undefined, socket: Writable): void {
  const pass = muxer?._readIncoming;
  if (!muxer || typeof pass !== 'function') return;
  muxer._readIncoming = function (this: Muxer) {
    socket.cork();
    try {
      pass.call(this);
    } finally {
      socket.uncork();
    }
  };
}
