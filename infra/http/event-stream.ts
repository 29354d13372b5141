import type { Request, Response } from 'express';
import type { Logger } from 'pino';

/** What a stream is handed: items after its position, and the position after them. */
export interface StreamBatch<T> {
  position: string;
  items: T[];
}

/** The receiving end of a stream's source: batches as they come, or the error that ends it. */
export interface StreamFollower<T> {
  deliver(batch: StreamBatch<T>): void;
  fail(error: unknown): void;
}

export interface StreamOptions<T> {
  /** The SSE `event:` of every item, and its `data:` as JSON. */
  event: string;
  data: (item: T) => unknown;
  /** Starts handing batches to the follower (the first: what is there already); returns the stop. */
  follow: (follower: StreamFollower<T>) => () => void;
  /** The server is shutting down: streams end, and clients resume elsewhere. */
  stopping: () => boolean;
  heartbeatMs: number;
  logger: Logger;
}

/** How often a quiet stream looks at `stopping` and whether its client left; a batch wakes it at once. */
const TICK_MS = 250;

/**
 * Server-Sent Events until the client leaves or the server stops. Only the
 * last item of a batch carries the position as its `id:`, so a client cut
 * off in the middle of a batch resumes (Last-Event-ID) before it: it may see
 * an item again, never miss one. A comment line every `heartbeatMs` keeps
 * proxies from closing a quiet stream.
 */
export async function sendEventStream<T>(req: Request, res: Response, options: StreamOptions<T>): Promise<void> {
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache, no-transform', 'x-accel-buffering': 'no' });
  res.write(`retry: 1000\n\n`);
  let gone = false;
  res.once('close', () => (gone = true));
  const batches: Array<StreamBatch<T>> = [];
  let failure: { error: unknown } | undefined;
  let wake: (() => void) | undefined;
  const stop = options.follow({
    deliver: (batch) => (batches.push(batch), wake?.()),
    fail: (error) => ((failure = { error }), wake?.()),
  });
  let quietSince = Date.now();
  try {
    while (!gone && !options.stopping() && !failure) {
      for (const { position, items } of batches.splice(0)) {
        items.forEach((item, index) => res.write(frame(options.event, options.data(item), index === items.length - 1 ? position : undefined)));
        if (items.length) quietSince = Date.now();
      }
      if (Date.now() - quietSince >= options.heartbeatMs) {
        res.write(': keep-alive\n\n');
        quietSince = Date.now();
      }
      await new Promise<void>((resolve) => {
        if (batches.length || failure) return resolve();
        const timer = setTimeout(resolve, TICK_MS);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      wake = undefined;
    }
    // The client resumes from its last id on another connection.
    if (failure) options.logger.warn({ err: failure.error }, 'event stream ended by an error');
  } finally {
    stop();
    if (!gone) res.end();
  }
}

function frame(event: string, data: unknown, id: string | undefined): string {
  return `${id === undefined ? '' : `id: ${id}\n`}event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}
