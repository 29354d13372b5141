import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';
import { PayloadTooLargeError } from '../../kernel/errors/errors.js';
import type { StoredObject } from './backend.js';

/**
 * Counts and hashes the bytes of an upload while they pass through, and stops
 * the upload as soon as it goes over the limit: before the excess reaches the
 * backend, and without waiting for the client to finish sending.
 */
export class ContentMeter {
  private readonly hash = createHash('sha256');
  private size = 0;

  constructor(private readonly maxBytes: number) {}

  async *measure(source: AsyncIterable<unknown>): AsyncGenerator<Buffer> {
    for await (const chunk of source) {
      const data = asBuffer(chunk);
      this.size += data.length;
      if (this.size > this.maxBytes) throw new PayloadTooLargeError(`The file is larger than ${this.maxBytes} bytes.`);
      this.hash.update(data);
      yield data;
    }
  }

  /** Call once, after the source is fully consumed. */
  result(): StoredObject {
    return { size: this.size, sha256: this.hash.digest('hex') };
  }
}

function asBuffer(chunk: unknown): Buffer {
  if (Buffer.isBuffer(chunk)) return chunk;
  if (chunk instanceof Uint8Array) return Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
  if (typeof chunk === 'string') return Buffer.from(chunk);
  throw new TypeError('Upload streams must carry bytes or strings.');
}

/**
 * Called first thing by a backend that may await before it starts reading: an
 * error of the stream in that gap must not crash the process as an unhandled
 * 'error' event. It is not lost: stream.errored keeps it, and the pipeline or
 * iterator that reads the stream later rejects with it.
 */
export function deferErrors(stream: Readable): void {
  stream.on('error', () => undefined);
}
