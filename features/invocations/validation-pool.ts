import path from 'node:path';
import { LRUCache } from 'lru-cache';
import { Piscina } from 'piscina';
import { InputError, UnavailableError } from '../../kernel/errors/errors.js';
import { SCHEMA_LIMITS } from '../models/json-schema.js';
import { checkReferences } from '../models/schema-references.js';
import { checkBody, newValidators, type BodyCheck, type BodyVerdict } from './body-check.js';

export interface ValidationPoolOptions {
  /** Most worker threads: the first starts on the first check, more while checks wait, and those idle for a minute stop. */
  threads: number;
  /** Longest one check may run before its thread is stopped and the body refused. */
  timeoutMs: number;
  /** Largest cost, the schema's expanded subschemas times the body's length, of a check run on the event loop (0: none). */
  inlineCost?: number;
}

// Handing a check to a thread and taking its answer back costs the event loop
// more than a small check itself (docs/benchmarks.md), so checks whose cost is
// bounded small run in place. At this bound a check takes about a millisecond
// at worst (a pattern over every byte of the body in each subschema).
const INLINE_COST = 16_384;
// Larger schemas would be compiled on the event loop too: they go to a thread.
const INLINE_SCHEMA_BYTES = 4096;

/** A schema's expanded size, for the choice of where its checks run; Infinity when they always go to a thread. */
function inlineSize(schema: object): number {
  const text = JSON.stringify(schema);
  // Pairwise uniqueItems grows with the square of the body: never in place.
  if (text.length > INLINE_SCHEMA_BYTES || text.includes('"uniqueItems"')) return Infinity;
  try {
    return checkReferences(schema, 'schema', SCHEMA_LIMITS.expandedNodes);
  } catch {
    return Infinity; // refused by the thread's compilation, with its message
  }
}

// The worker is a .ts file under tsx (tests, `npm start` from sources) and a .js file in dist/.
const WORKER = new URL(`./validation-worker${path.extname(new URL(import.meta.url).pathname)}`, import.meta.url).href;

/**
 * Checks bodies against tenant schemas on worker threads, so that a costly
 * schema or body delays only its own request and never the event loop that
 * answers everyone else; a check that runs past the deadline has its thread
 * stopped and is a 400. Checks bounded small run in place.
 */
export class ValidationPool {
  private pool: Piscina<BodyCheck & { id: number }, BodyVerdict> | undefined;
  private closed = false;
  private lastId = 0;
  /** Checks sent and not yet started, by id: what to do when a thread takes one. */
  private readonly waiting = new Map<number, () => void>();
  /** inlineSize of each model's schema, by the check's key (a registered model's schemas never change). */
  private readonly sizes = new LRUCache<string, number>({ max: 5000 });
  /** The validators of the checks run in place. */
  private readonly validators = newValidators();

  constructor(private readonly options: ValidationPoolOptions) {}

  async check(check: BodyCheck): Promise<BodyVerdict> {
    if (this.closed) throw new UnavailableError('The server is shutting down. Retry later.');
    if (this.sizeOf(check) * check.body.length <= (this.options.inlineCost ?? INLINE_COST)) return checkBody(check, this.validators);
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

  /** Threads running now. */
  get threads(): number {
    return this.pool?.threads.length ?? 0;
  }

  /** Stops the threads; a check still waiting for one is refused, one running finishes (within its deadline). */
  async close(): Promise<void> {
    this.closed = true;
    await this.pool?.close({ force: true });
    this.pool = undefined;
  }

  private sizeOf(check: BodyCheck): number {
    let size = this.sizes.get(check.key);
    if (size === undefined) {
      size = inlineSize(check.schema);
      this.sizes.set(check.key, size);
    }
    return size;
  }

  private workers() {
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
