import type { ServerResponse } from 'node:http';

const pending = new WeakMap<ServerResponse, Array<() => void>>();

/**
 * Calls `callback` once the response closes, answered or abandoned, in the
 * order the callbacks were given. The request's middlewares (log line,
 * in-flight counts, audit record, server span) share one `close` listener:
 * with the seven that `stream.pipeline` adds to a streamed download, one
 * each passed Node's threshold of ten and logged a memory-leak warning per
 * download.
 */
export function onResponseClose(res: ServerResponse, callback: () => void): void {
  const callbacks = pending.get(res);
  if (callbacks) return void callbacks.push(callback);
  const first = [callback];
  pending.set(res, first);
  res.once('close', () => {
    for (const call of first) call();
  });
}
