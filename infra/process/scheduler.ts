import type { Logger } from 'pino';

/** The longest wait after failures in a row, unless a task's interval is longer: an absent database is not hammered. */
export const DEFAULT_MAX_BACKOFF_MS = 10_000;

export interface TaskDefinition {
  /** Names the task in logs, in the `task` label of its metrics and in the closing steps. */
  name: string;
  /** The wait between the end of one run and the start of the next. */
  intervalMs: number;
  /** One run; a rejection is a failure, which backs the next run off. `stopping` aborts on `stop`, for a long run to end early. */
  run: (stopping: AbortSignal) => Promise<unknown>;
  /** The longest wait after failures in a row (DEFAULT_MAX_BACKOFF_MS); never shorter than the interval. */
  maxBackoffMs?: number;
  /** What else `stop` waits for once the last run ended (work the runs started, writes they left gathering). */
  afterStop?: () => Promise<unknown>;
}

/** Told of every task started and every run: the `didyma_background_task_*` metrics. */
export interface TaskObserver {
  started(task: string): void;
  ran(task: string, seconds: number, failed: boolean): void;
}

/** The wait before the next run: the interval, doubled per failure in a row up to the cap (or the interval, when longer). */
export function backoffMs(intervalMs: number, failures: number, maxBackoffMs = DEFAULT_MAX_BACKOFF_MS): number {
  if (!failures) return intervalMs;
  return Math.max(intervalMs, Math.min(intervalMs * 2 ** failures, maxBackoffMs));
}

/**
 * One periodic task: it runs when started, then `intervalMs` after each run
 * ends, so it never overlaps itself; `wake` runs it now (or right after the
 * run in progress) unless it is backing off after a failure.
 */
export class ScheduledTask {
  private timer: NodeJS.Timeout | undefined;
  private immediate: NodeJS.Immediate | undefined;
  private running: Promise<void> | undefined;
  private again = false;
  private started = false;
  private failuresInRow = 0;
  private stopping = new AbortController();

  constructor(
    private readonly definition: TaskDefinition,
    private readonly logger: Logger,
    private readonly observer?: TaskObserver,
  ) {}

  get name(): string {
    return this.definition.name;
  }

  /** Failed runs since the last one that succeeded. */
  get failures(): number {
    return this.failuresInRow;
  }

  /** Runs now, then every interval until `stop`; a second start is a no-op. */
  start(): void {
    if (this.started) return;
    this.started = true;
    if (this.stopping.signal.aborted) this.stopping = new AbortController();
    this.observer?.started(this.name);
    if (this.running) this.again = true;
    else this.schedule(0);
  }

  /** Runs now, or once more right after the run in progress; a task backing off waits its backoff out. */
  wake(): void {
    if (!this.started || this.failuresInRow) return;
    if (this.running) this.again = true;
    else this.schedule(0);
  }

  /** No further run starts; resolves once the run in progress and `afterStop` have ended. */
  async stop(): Promise<void> {
    this.started = false;
    this.again = false;
    this.cancel();
    this.stopping.abort();
    await this.running;
    await this.definition.afterStop?.();
  }

  private schedule(delayMs: number): void {
    this.cancel();
    // A wake-up runs on the next turn of the event loop (setTimeout would wait at least 1 ms).
    if (delayMs === 0) this.immediate = setImmediate(() => void this.tick());
    else this.timer = setTimeout(() => void this.tick(), delayMs).unref();
  }

  private cancel(): void {
    clearTimeout(this.timer);
    clearImmediate(this.immediate);
    this.timer = undefined;
    this.immediate = undefined;
  }

  private async tick(): Promise<void> {
    this.timer = undefined;
    this.immediate = undefined;
    if (!this.started || this.running) return;
    this.running = this.runOnce();
    await this.running;
    this.running = undefined;
    if (!this.started) return;
    const soon = this.again && !this.failuresInRow;
    this.again = false;
    this.schedule(soon ? 0 : this.nextDelayMs());
  }

  private nextDelayMs(): number {
    return backoffMs(this.definition.intervalMs, this.failuresInRow, this.definition.maxBackoffMs);
  }

  private async runOnce(): Promise<void> {
    const started = performance.now();
    let failed = false;
    try {
      await this.definition.run(this.stopping.signal);
      this.failuresInRow = 0;
    } catch (error) {
      failed = true;
      this.failuresInRow += 1;
      this.logger.warn({ err: error, task: this.name, failures: this.failuresInRow, retryInMs: this.nextDelayMs() }, 'a background task failed; it runs again after a backoff');
    }
    this.observer?.ran(this.name, (performance.now() - started) / 1000, failed);
  }
}

/**
 * The background work of a process, one owner for all of it: each periodic
 * task registered by name with its interval, its backoff on failure and its
 * metrics, and stopped (waiting for the run in progress) on shutdown.
 */
export class Scheduler {
  private readonly byName = new Map<string, ScheduledTask>();

  constructor(
    private readonly logger: Logger,
    private readonly observer?: TaskObserver,
  ) {}

  /** Registers a task, idle until its `start`; a name is registered once. */
  add(definition: TaskDefinition): ScheduledTask {
    if (this.byName.has(definition.name)) throw new Error(`a background task named ${definition.name} is registered already`);
    const task = new ScheduledTask(definition, this.logger, this.observer);
    this.byName.set(definition.name, task);
    return task;
  }

  /** Every registered task, in the order of registration (each a closing step of its own, by name). */
  tasks(): ScheduledTask[] {
    return [...this.byName.values()];
  }

  /** Runs the named task now (see `ScheduledTask.wake`). */
  wake(name: string): void {
    const task = this.byName.get(name);
    if (!task) throw new Error(`no background task named ${name}`);
    task.wake();
  }

  /** Stops every task and waits for their runs in progress. */
  async stop(): Promise<void> {
    await Promise.all(this.tasks().map((task) => task.stop()));
  }
}
