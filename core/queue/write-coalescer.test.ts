import { Writable } from 'node:stream';
import { expect } from 'chai';
import type { ChannelModel } from 'amqplib';
import { writeCoalescer } from './write-coalescer.js';

/** A socket stand-in that records each write it is asked to make, as the kernel would see them. */
function recordingSocket() {
  const writes: string[] = [];
  const socket = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      writes.push(chunk.toString());
      callback();
    },
    writev(chunks, callback) {
      writes.push(chunks.map(({ chunk }) => String(chunk)).join(''));
      callback();
    },
  });
  return { writes, connection: { connection: { stream: socket } } as unknown as ChannelModel, socket };
}

describe('queue write coalescer', () => {
  it('sends the frames written in one event-loop turn as one write, and later ones at once', async () => {
    const { writes, connection, socket } = recordingSocket();
    const coalesce = writeCoalescer(connection);
    expect(writeCoalescer(connection)).to.equal(coalesce); // one per connection
    for (const frame of ['a', 'b', 'c']) {
      coalesce();
      socket.write(frame);
    }
    expect(writes).to.deep.equal([]);
    await new Promise((resolve) => setImmediate(resolve));
    expect(writes).to.deep.equal(['abc']);
    coalesce();
    socket.write('d');
    await new Promise((resolve) => setImmediate(resolve));
    expect(writes).to.deep.equal(['abc', 'd']);
  });

  it("sends the frames of one pass of amqplib's multiplexer as one write, whenever the pass runs", () => {
    const { writes, socket } = recordingSocket();
    const muxer = { _readIncoming: () => ['a', 'b', 'c'].forEach((frame) => socket.write(frame)) };
    writeCoalescer({ connection: { stream: socket, muxer } } as unknown as ChannelModel);
    muxer._readIncoming();
    expect(writes).to.deep.equal(['abc']);
  });

  it('does nothing when the connection has no socket where amqplib keeps it', () => {
    expect(() => writeCoalescer({} as ChannelModel)()).to.not.throw();
  });
});
