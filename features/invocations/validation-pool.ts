import path from 'node:path';
import { LRUCache } from 'lru-cache';
import { Piscina } from 'piscina';
import { InputError, QuotaExceededError, UnavailableError } from '../../kernel/errors/errors.js';
import { compileSchema, schemaCost } from '../models/json-schema.js';
import { checkBody, newValidators, type BodyCheck, type BodyVerdict, type SchemaCompile } from './body-check.js';
import { PausableDeadline } from './deadline.js';
import { Turns } from './turns.js';

export interface ValidationPoolOptions {
  /** Worker threads, started on the first check that needs one and kept, so that a check never waits for one to start. */
  threads: number;
  /** Longest one check may take from its arrival, its wait for a thread included (not a thread's own start): past it, its thread is stopped and the body refused. */
  timeoutMs: number;
  /** Most checks of one workspace waiting for a thread; more are refused with 429. */
  maxWaitingPerWorkspace: number;
  /** Largest worst-case cost, in nanoseconds, of a check run on the event loop (0: none). */
  inlineBudgetNs?: number;
}

// Handing a check to a thread and taking its answer back costs the event loop
// more than a small check itself (docs/benchmarks.md), so checks whose worst
// case is bounded to about a millisecond run in place. The worst cases per
// character of the body are measured by bench/validation.ts (a subschema) and
// bench/pattern-cost.ts (an RE2 instruction matched, or compiled), with margin.
const INLINE_BUDGET_NS = 1_000_000;
const NODE_NS = 60;
const INSTRUCTION_NS = 200;
const COMPILE_NS = 3000;
// Larger schemas would be compiled on the event loop too: they go to a thread.
const INLINE_SCHEMA_BYTES = 4096;

/** A check's worst-case cost per character of its body, in nanoseconds; Infinity when it always goes to a thread. */
function costPerCharacter(schema: object): number {
  const text = JSON.stringify(schema);
  // Pairwise uniqueItems grows with the square of the body: never in place.
  if (text.length > INLINE_SCHEMA_BYTES || text.includes('"uniqueItems"')) return Infinity;
  try {
    const cost = schemaCost(schema, 'schema');
    if (cost.compiledInstructions * COMPILE_NS > INLINE_BUDGET_NS) return Infinity;
    return cost.nodes * NODE_NS + cost.patternInstructions * INSTRUCTION_NS;
  } catch {
    return Infinity; // refused by the thread's compilation, with its message
  }
}

/** A workspace has as many checks waiting for a thread as it may: nothing was recorded. */
export class ValidationQueueFullError extends QuotaExceededError {
  constructor(maxWaiting: number, retryAfterSeconds: number) {
    super(`The workspace has ${maxWaiting} bodies waiting to be checked against their model's schema, its limit; nothing was recorded. Retry when some are done.`, retryAfterSeconds);
  }
}

interface Waiter {
  workspaceId: number;
  enter: () => void;
  refuse: (error: Error) => void;
}

// The worker is a .ts file under tsx (tests, `npm start` from sources) and a .js file in dist/.
const WORKER = new URL(`./validation-worker${path.extname(new URL(import.meta.url).pathname)}`, import.meta.url).href;

/**
 * Checks bodies against tenant schemas on worker threads, so that a costly
 * schema or body delays only its own workspace and never the event loop that
 * answers everyone else. Checks wait for a thread in their workspace's line
 * and the threads serve the lines in turn; a check not done within the
 * deadline from its arrival is a 400, its thread stopped if it was running.
 * Checks whose worst case is about a millisecond run in place. Registration
 * compiles its schemas here too, in the same turns.
 */
export class ValidationPool {
  private pool: Piscina<(BodyCheck | SchemaCompile) & { id: number }, BodyVerdict> | undefined;
  private closed = false;
  private running = 0;
  /** Checks on a thread now, by workspace. */
  private readonly runningBy = new Map<number, number>();
  /**
   * Most threads one workspace's checks hold at once: all but one, so that
   * another workspace's check never waits behind a flood of checks that run
   * to their deadline (one thread serves everyone when there is only one).
   */
  private readonly maxRunningPerWorkspace: number;
  private lastId = 0;
  /** Checks handed to a thread and not yet started, by id: their deadlines, paused meanwhile. */
  private readonly starting = new Map<number, PausableDeadline>();
  private readonly turns: Turns<Waiter>;
  /** costPerCharacter of each model's schema, by the check's key (a registered model's schemas never change). */
  private readonly costs = new LRUCache<string, number>({ max: 5000 });
  /** The validators of the checks run in place. */
  private readonly validators = newValidators();

  constructor(private readonly options: ValidationPoolOptions) {
    this.turns = new Turns(options.maxWaitingPerWorkspace);
    this.maxRunningPerWorkspace = Math.max(1, options.threads - 1);
  }

  /** The verdict on a body of `workspaceId`'s model. */
  async check(workspaceId: number, check: BodyCheck): Promise<BodyVerdict> {
    if (this.closed) throw new UnavailableError('The server is shutting down. Retry later.');
    if (this.costOf(check) * check.body.length <= (this.options.inlineBudgetNs ?? INLINE_BUDGET_NS)) return checkBody(check, this.validators);
    return this.onThread(workspaceId, check, `request.body: validation against the model's schema took longer than ${this.options.timeoutMs} ms; nothing was recorded.`);
  }

  /**
   * Compiles a schema `workspaceId` registers, whose limits were checked;
   * throws InputError naming `field` when ajv refuses it. A schema whose
   * checks may run in place is compiled in place, as its first check would.
   */
  async compile(workspaceId: number, schema: object, field: string): Promise<void> {
    if (this.closed) throw new UnavailableError('The server is shutting down. Retry later.');
    if (costPerCharacter(schema) < Infinity) {
      compileSchema(schema, field);
      return;
    }
    const verdict = await this.onThread(workspaceId, { compileOnly: true, schema, schemaField: field }, `${field}: compiling the schema took longer than ${this.options.timeoutMs} ms.`);
    if (verdict.refused !== undefined) throw new InputError(verdict.refused);
  }

  /** Runs a task on a thread in its workspace's turn, refused with `late` past the deadline. */
  private async onThread(workspaceId: number, task: BodyCheck | SchemaCompile, late: string): Promise<BodyVerdict> {
    const deadline = new PausableDeadline(this.options.timeoutMs);
    const id = ++this.lastId;
    try {
      await this.turn(workspaceId, deadline.signal);
      try {
        // A thread starting (the first, or one replacing a stopped one) is the platform's time, not the check's.
        deadline.pause();
        this.starting.set(id, deadline);
        return await this.workers().run({ ...task, id }, { signal: deadline.signal });
      } finally {
        this.starting.delete(id);
        this.leave(workspaceId);
      }
    } catch (error) {
      if (deadline.signal.aborted) throw new InputError(late);
      throw error;
    } finally {
      deadline.clear();
    }
  }

  /** Threads running now. */
  get threads(): number {
    return this.pool?.threads.length ?? 0;
  }

  /** Stops the threads; a check still waiting for one is refused, one running finishes (within its deadline). */
  async close(): Promise<void> {
    this.closed = true;
    for (const waiter of this.turns.drain()) waiter.refuse(new UnavailableError('The server is shutting down. Retry later.'));
    await this.pool?.close({ force: true });
    this.pool = undefined;
  }

  /** Resolves when a thread is this check's; refuses it when its workspace's line is full or the deadline passes first. */
  private turn(workspaceId: number, deadline: AbortSignal): Promise<void> {
    if (this.running < this.options.threads && this.mayRun(workspaceId)) {
      this.enter(workspaceId);
      this.turns.serve(workspaceId);
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = {
        workspaceId,
        enter: () => {
          deadline.removeEventListener('abort', giveUp);
          resolve();
        },
        refuse: reject,
      };
      const giveUp = () => {
        this.turns.remove(workspaceId, waiter);
        reject(deadline.reason as Error);
      };
      if (!this.turns.push(workspaceId, waiter)) {
        reject(new ValidationQueueFullError(this.options.maxWaitingPerWorkspace, Math.max(1, Math.ceil(this.options.timeoutMs / 1000))));
        return;
      }
      deadline.addEventListener('abort', giveUp, { once: true });
    });
  }

  private mayRun(workspaceId: number): boolean {
    return (this.runningBy.get(workspaceId) ?? 0) < this.maxRunningPerWorkspace;
  }

  private enter(workspaceId: number): void {
    this.running += 1;
    this.runningBy.set(workspaceId, (this.runningBy.get(workspaceId) ?? 0) + 1);
  }

  /** Frees the workspace's thread and gives it to the next waiting check in turn whose workspace may have one more. */
  private leave(workspaceId: number): void {
    this.running -= 1;
    const left = this.runningBy.get(workspaceId)! - 1;
    if (left) this.runningBy.set(workspaceId, left);
    else this.runningBy.delete(workspaceId);
    const waiter = this.turns.shift((id) => this.mayRun(id));
    if (!waiter) return;
    this.enter(waiter.workspaceId);
    waiter.enter();
  }

  private costOf(check: BodyCheck): number {
    let cost = this.costs.get(check.key);
    if (cost === undefined) {
      cost = costPerCharacter(check.schema);
      this.costs.set(check.key, cost);
    }
    return cost;
  }

  private workers() {
    if (!this.pool) {
      this.pool = new Piscina({ filename: WORKER, minThreads: this.options.threads, maxThreads: this.options.threads, idleTimeout: 60_000 });
      this.pool.on('message', ({ validationStarted: id }: { validationStarted?: number }) => {
        if (id !== undefined) this.starting.get(id)?.resume();
      });
    }
    return this.pool;
  }
}
