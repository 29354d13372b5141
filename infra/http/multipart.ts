import type { Request } from 'express';
import busboy from 'busboy';
import { Transform, type Readable } from 'node:stream';
import { InputError, PayloadTooLargeError, UnsupportedMediaTypeError } from '../../kernel/errors/errors.js';

export interface IncomingFile {
  fileName: string;
  contentType: string;
}

export interface ReceivedFile<T> extends IncomingFile {
  result: T;
  size: number;
}

/**
 * Streams the one file of field `field` in a multipart body into `sink`,
 * without buffering it here. More than `maxBytes` → 413 (the sink's stream
 * errors, so a partial write is abandoned); no such field → 400.
 */
export function receiveFile<T>(req: Request, field: string, maxBytes: number, sink: (stream: Readable, file: IncomingFile) => Promise<T>): Promise<ReceivedFile<T>> {
  if (!req.is('multipart/form-data')) return Promise.reject(new UnsupportedMediaTypeError('Expected multipart/form-data.'));
  return new Promise((resolve, reject) => {
    let parser: busboy.Busboy;
    try {
      // busboy reports 'limit' on reaching fileSize; one byte more means "over maxBytes".
      parser = busboy({ headers: req.headers, limits: { files: 1, fileSize: maxBytes + 1, fields: 20, fieldSize: 64 * 1024, parts: 30 } });
    } catch {
      reject(new InputError('Malformed multipart body.'));
      return;
    }
    let pending: Promise<ReceivedFile<T>> | undefined;
    let part: Transform | undefined;
    let failed = false;
    const fail = (error: Error) => {
      if (failed) return;
      failed = true;
      req.unpipe(parser);
      req.resume();
      // A sink still writing is stopped, and settles before the caller hears of
      // the failure: its clean-up must not race a write that is still going on.
      part?.destroy(error);
      void (pending ?? Promise.resolve()).then(
        () => reject(error),
        () => reject(error),
      );
    };
    parser.on('file', (name, stream, info) => {
      if (name !== field || pending) {
        stream.resume();
        return;
      }
      // Count through a pass-through: a 'data' listener on the part itself would
      // start it flowing before the sink reads, and bytes would be lost.
      let size = 0;
      const counted = new Transform({
        transform(chunk: Buffer, _encoding, done) {
          size += chunk.length;
          done(null, chunk);
        },
      });
      part = counted;
      stream.on('error', (error) => counted.destroy(error));
      stream.pipe(counted);
      stream.on('limit', () => {
        counted.destroy(new PayloadTooLargeError(`The file is larger than ${maxBytes} bytes.`));
        stream.resume();
        fail(new PayloadTooLargeError(`The file is larger than ${maxBytes} bytes.`));
      });
      const file = { fileName: info.filename ?? '', contentType: (info.mimeType || 'application/octet-stream').toLowerCase() };
      pending = sink(counted, file).then((result) => ({ ...file, result, size }));
      pending.catch(fail);
    });
    parser.on('filesLimit', () => fail(new InputError('Send exactly one file.')));
    parser.on('partsLimit', () => fail(new InputError('Too many parts in the multipart body.')));
    parser.on('error', () => fail(new InputError('Malformed multipart body.')));
    parser.on('close', () => {
      if (failed) return;
      if (!pending) return fail(new InputError(`${field}: a file is required.`));
      pending.then(resolve, fail);
    });
    req.pipe(parser);
  });
}

/** Collects a (small, size-limited) stream into memory. */
export async function collect(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}
