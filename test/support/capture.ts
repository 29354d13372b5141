import { Writable } from 'node:stream';

/** The error `promise` rejects with; fails when it resolves. */
export async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection');
}

/** A stream for a JSON logger (pino) that keeps each line it writes, parsed, in `lines`. */
export function jsonLines<T = Record<string, unknown>>(lines: T[]): Writable {
  return new Writable({
    write(chunk, _encoding, callback) {
      lines.push(JSON.parse(String(chunk)) as T);
      callback();
    },
  });
}
