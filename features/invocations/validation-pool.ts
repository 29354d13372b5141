import path from 'node:path';
import { Piscina } from 'piscina';
import { InputError, UnavailableError } from '../../kernel/errors/errors.js';
import type { BodyCheck, BodyVerdict } from './body-check.js';

export interface ValidationPoolOptions {
  /** Most worker threads: the first starts on the first check, more while checks wait, and those idle for a minute stop. */
  threads: number;
  /** Longest one check may run before its thread is stopped and the body refused. */
  timeoutMs: number;
}

// The worker is a .ts file under tsx (tests, `npm start` from sources) and a .js file in dist/.
const WORKER = new URL(`./validation-worker${path.extname(new URL(import.meta.url).pathname)}`, import.meta.url).href;

/**
 * Checks bodies against tenant schemas on worker threads, so that a costly
 * schema or body delays only its own request and never the event loop that
 * answers everyone else; a check that runs past the deadline has its thread
 * stopped and is a 400.
 */
export class ValidationPool {
  private pool: Piscina<BodyCheck & { id: number }, BodyVerdict> | undefined;
  private closed = false;
  private lastId = 0;
  /** Checks sent and not yet started, by id: what to do when a thread takes one. */
  private readonly waiting = new Map<number, () => void>();

  constructor(private readonly options: ValidationPoolOptions) {}

  async check(check: BodyCheck): Promise<BodyVerdict> {
    const id = ++this.lastId;
    const deadline = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    this.waiting.set(id, () => {
      timer = setTimeout(() => deadline.abort(), this.options.timeoutMs);
    });
    try {
      return await this.workers().run({ ...check, id }, { signal: deadline.signal });
    } catch (error) {
      if (deadline.signal.aborted) throw new InputError(`request.body: validation against the model's schema took longer than ${this.options.timeoutMs} ms; nothing was recorded.`);
      throw error;
    } finally {
      clearTimeout(timer);
      this.waiting.delete(id);
    }
  }

  /** Stops the threads; a check still waiting for one is refused, one running finishes (within its deadline). */
  async close(): Promise<void> {
    this.closed = true;
    await this.pool?.close({ force: true });
    this.pool = undefined;
  }

  private workers() {
    if (this.closed) throw new UnavailableError('The server is shutting down. Retry later.');
    if (!this.pool) {
      this.pool = new Piscina({ filename: WORKER, minThreads: 1, maxThreads: this.options.threads, idleTimeout: 60_000 });
      this.pool.on('message', ({ validationStarted: id }: { validationStarted?: number }) => {
        if (id === undefined) return;
        this.waiting.get(id)?.();
        this.waiting.delete(id);
      });
    }
    return this.pool;
  }
}
