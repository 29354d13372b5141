import type { Request, Response } from 'express';
import type { Logger } from 'pino';

/** Where a stream reads from: items after a position, and the position after them. */
export interface StreamSource<T> {
  from: string;
  read(position: string): Promise<{ position: string; items: T[] }>;
}

export interface StreamOptions<T> {
  /** The SSE `event:` of every item, and its `data:` as JSON. */
  event: string;
  data: (item: T) => unknown;
  /** Calls its listener when new items may be there; returns the unsubscribe. */
  subscribe: (listener: () => void) => () => void;
  /** Whether `subscribe` sees every change as it happens; when not, the stream reads every `pollMs`. */
  following: () => boolean;
  /** The server is shutting down: streams end, and clients resume elsewhere. */
  stopping: () => boolean;
  heartbeatMs: number;
  pollMs: number;
  logger: Logger;
}

/** How often a quiet stream looks at `stopping` and whether its client left; a change wakes it at once. */
const TICK_MS = 250;

/**
 * Server-Sent Events until the client leaves or the server stops. Only the
 * last item of a batch carries the position as its `id:`, so a client cut
 * off in the middle of a batch resumes (Last-Event-ID) before it: it may see
 * an item again, never miss one. A comment line every `heartbeatMs` keeps
 * proxies from closing a quiet stream.
 */
export async function sendEventStream<T>(req: Request, res: Response, source: StreamSource<T>, options: StreamOptions<T>): Promise<void> {
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache, no-transform', 'x-accel-buffering': 'no' });
  res.write(`retry: 1000\n\n`);
  let gone = false;
  res.once('close', () => (gone = true));
  let woken = true;
  let wake: (() => void) | undefined;
  const unsubscribe = options.subscribe(() => {
    woken = true;
    wake?.();
  });
  let position = source.from;
  let quietSince = Date.now();
  let lastRead = 0;
  try {
    while (!gone && !options.stopping()) {
      if (woken || (!options.following() && Date.now() - lastRead >= options.pollMs)) {
        woken = false;
        lastRead = Date.now();
        const { position: next, items } = await source.read(position);
        items.forEach((item, index) => res.write(frame(options.event, options.data(item), index === items.length - 1 ? next : undefined)));
        position = next;
        if (items.length) quietSince = Date.now();
      }
      if (Date.now() - quietSince >= options.heartbeatMs) {
        res.write(': keep-alive\n\n');
        quietSince = Date.now();
      }
      await new Promise<void>((resolve) => {
        // A change announced while the last read ran is read at once, not a tick later.
        if (woken) return resolve();
        const timer = setTimeout(resolve, TICK_MS);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      wake = undefined;
    }
  } catch (error) {
    // The client resumes from its last id on another connection.
    options.logger.warn({ err: error }, 'event stream ended by an error');
  } finally {
    unsubscribe();
    if (!gone) res.end();
  }
}

function frame(event: string, data: unknown, id: string | undefined): string {
  return `${id === undefined ? '' : `id: ${id}\n`}event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}
