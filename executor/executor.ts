import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import { LRUCache } from 'lru-cache';
import { isDatabaseUnavailable, type Db } from '../infra/db/database.js';
import type { Listener, Ring, WorkQueue } from '../infra/queue/queue.js';
import type { Doorbell } from '../features/invocations/doorbell.js';
import { invocationsStore, type ContextWindow, type InvocationRow } from '../features/invocations/store.js';
import { DELETED_BEFORE_RUN, invocationState, type ClaimedRow } from '../features/invocations/state.js';
import { modelsStore, type ModelRow } from '../features/models/store.js';
import { RunWrites } from './run-writes.js';
import { LeaseKeeper, LeaseLostError } from './lease.js';
import type { UploadsService } from '../features/files/uploads.service.js';
import { inferenceBody, storedResponse } from './files.js';
import { Slots } from './slots.js';
import { Wakeup } from './wakeup.js';
import { IdleRunners, type WakeReason } from './idle-runners.js';
import { UpstreamError, withoutAddresses, type FailureKind } from '../infra/connectors/errors.js';
import { backoffAfter, policyOfModel } from '../features/models/retry-policy.js';
import { EXECUTOR_IDENTITY } from './identity.js';
import { annotateSpan, inConsumerSpan } from '../infra/telemetry/spans.js';
import { invocationAttributes, STATUS_ATTRIBUTE } from '../features/invocations/trace-attributes.js';

export interface InferenceInput {
  modelCode: string;
  version: string;
  body: string;
  requestType: string;
  context?: Array<{ request: string; response: string }>;
}

export interface InferenceProxy {
  infer(input: InferenceInput, options?: { signal?: AbortSignal }): Promise<{ response: string }>;
}

export interface ExecutorOptions {
  concurrency: number;
  leaseMs: number;
  /** How long an idle executor waits for a wake-up before it claims anyway. */
  pollMs: number;
  /** Base delay before a transient failure is retried, for models whose retry policy names none. */
  retryBackoffMs: number;
  /** Who this executor is in the attempts it records (EXECUTOR_IDENTITY). */
  identity?: string;
  /** What a `need_context` model receives of the session's history. */
  context: ContextWindow;
}

export interface ExecutorDeps {
  db: Db;
  /** Reads file inputs and writes file outputs. */
  uploads: UploadsService;
  /** Where wake-ups arrive, and where those this executor has no idle runner for go on. */
  queue: Pick<WorkQueue, 'listen' | 'ring'>;
  /** Announces the explanations a run queues. */
  doorbell: Pick<Doorbell, 'ring'>;
  logger: Logger;
  /** The server proxy of the deployment that serves a model (ProxyResolver.resolve). */
  resolveProxy: (model: ModelRow) => Promise<InferenceProxy>;
  options: ExecutorOptions;
  /** Observes each claim, retries included (metrics). */
  onClaimed?: (row: InvocationRow) => void;
  /** Observes each finished run (metrics). */
  onFinished?: (row: InvocationRow, model: ModelRow, outcome: 'COMPLETED' | 'ERROR', seconds: number) => void;
}

/** Errors that may succeed on a later attempt (model server down, timeouts, 5xx). */
export const isTransient = (error: unknown) => Boolean((error as { transient?: boolean } | null)?.transient);

/** The kind of a transient failure, classified where it was made; one that names none counts as `unreachable`. */
const failureKindOf = (error: unknown): FailureKind => (error as { kind?: FailureKind } | null)?.kind ?? 'unreachable';

/**
 * Runs queued invocations. Each of its runners claims the next invocation in
 * fair order (features/invocations/state.ts, `claim`), calls the model server
 * while the lease is renewed, commits COMPLETED or ERROR under that lease,
 * and claims again. A runner whose claim finds nothing waits idle until a
 * wake-up counts new work or the poll comes; one that finds queued work it
 * cannot take yet (a quota, a backoff) claims again when a run ends or after
 * 100 ms. A transient failure its model's retry policy retries puts the
 * invocation back with the policy's backoff, until the policy's attempts are
 * spent, after which it is ERROR. A write refused because the lease was lost
 * is logged: the run belongs to whoever took the lease.
 */
export class Executor {
  private listener: Listener | undefined;
  private runners: Array<Promise<void>> = [];
  private readonly idle: IdleRunners;
  // Model rows never change after registration but for their soft delete, which
  // does not stop queued work: a short-lived copy saves a query per invocation.
  private readonly models = new LRUCache<number, ModelRow>({ max: 1000, ttl: MODEL_CACHE_MS });
  private readonly writes: RunWrites;
  /** Model calls in flight: at most `concurrency`, however many runs its runners hold, a freed one to the workspace with fewest. */
  private readonly modelCalls: Slots;
  private readonly wakeup = new Wakeup(WAITING_TICK_MS);
  private stopping = false;

  constructor(private readonly deps: ExecutorDeps) {
    this.writes = new RunWrites(deps.db, deps.options.leaseMs, deps.options.identity ?? EXECUTOR_IDENTITY);
    this.modelCalls = new Slots(deps.options.concurrency);
    this.idle = new IdleRunners(deps.options.pollMs);
  }

  async start(): Promise<void> {
    this.listener = await this.deps.queue.listen((ring) => this.woken(ring));
    // Twice the model calls are claimed ahead: the claim and completion round
    // trips of some runs overlap the model calls of others. Four times drained a
    // backlog faster, but its completions came in bursts that queued tenfold
    // longer behind one webhook endpoint's deliveries in flight (docs/benchmarks.md).
    const runners = this.deps.options.concurrency * RUNNERS_PER_CALL;
    this.runners = Array.from({ length: runners }, () => this.runner());
  }

  /** Stops claiming and waits for the runs in flight (SIGTERM drain): queued work stays queued for other executors. */
  async stop(): Promise<void> {
    this.stopping = true;
    this.idle.stop();
    this.wakeup.notify();
    await this.listener?.stop();
    await Promise.all(this.runners);
  }

  /**
   * A wake-up: as many idle runners as it counts runs claim. What this
   * executor has no idle runner for goes on to another executor, a few hops
   * at most: when every executor is busy, their runners claim it as their runs end.
   */
  private woken({ count, hops }: Ring): void {
    const left = count - this.idle.wake(count);
    if (left > 0 && hops < MAX_RING_HOPS) this.deps.queue.ring({ count: left, hops: hops + 1 });
  }

  /** Claims and runs invocations in fair order until the executor stops, idle while there is nothing to claim. */
  private async runner(): Promise<void> {
    let woken: WakeReason = 'ring'; // a start claims at once
    while (!this.stopping) {
      try {
        const claim = await this.durably(() => this.writes.claim());
        const byPoll = woken === 'poll';
        woken = 'ring';
        if (claim.row) {
          // Woken by the poll, it found work that came without a wake-up: one more runner looks for more.
          if (byPoll) this.idle.wake(1, 'poll');
          this.deps.onClaimed?.(claim.row);
          await this.runClaimed(claim.row);
          this.wakeup.notify(); // the run freed a slot of its workspace and deployment
        } else if (claim.waiting) {
          await this.wakeup.wait();
        } else {
          woken = await this.idle.wait();
        }
      } catch (error) {
        if (error instanceof LeaseLostError) continue; // logged where it was found: the run is another executor's now
        this.deps.logger.error({ err: error }, 'runner failed; claiming again shortly');
        await sleep(RUNNER_FAILURE_PAUSE_MS);
      }
    }
  }

  /** Runs a claimed invocation under its lease; true when it was released for a retry. */
  private async runClaimed(row: ClaimedRow): Promise<boolean> {
    const log = this.deps.logger.child({ invocationId: row.id, attempt: row.attempts });
    // A lease lost (a cancel, or a takeover) aborts the model call: its result would be refused anyway.
    const call = new AbortController();
    const lease = new LeaseKeeper(this.deps.db, row, this.deps.options.leaseMs, log, () => call.abort());
    try {
      const model = await this.durably(() => this.modelOf(row.model_id));
      // The run continues the trace of the request that queued it, whichever runner claimed it.
      return await inConsumerSpan('process invocation', row.traceparent, { ...invocationAttributes(row, model), 'messaging.operation.type': 'process' }, () =>
        this.run(row, model, log, call.signal),
      );
    } finally {
      lease.stop();
    }
  }

  private async run(row: ClaimedRow, model: ModelRow, log: Logger, signal: AbortSignal): Promise<boolean> {
    const started = Date.now();
    // Appended while its model was being deleted: it does not run either.
    if (model.deleted_at) return this.failed(row, model, new Error(DELETED_BEFORE_RUN), started, log);
    let stored: string;
    try {
      // Reads before the call wait out a database restart too, rather than failing the invocation.
      const input = await this.durably(() => this.inputOf(row, model));
      const proxy = await this.durably(() => this.deps.resolveProxy(model));
      const { response } = await this.modelCalls.run({ key: row.workspace_id, weight: row.share_weight, priority: row.priority }, () => proxy.infer(input, { signal }));
      stored = await storedResponse(this.deps.uploads, row, model, response);
    } catch (error) {
      return this.failed(row, model, error, started, log);
    }
    // The model has run: its result is committed even across a database restart, unless the lease was lost.
    const committed = await this.commit(row, model, stored);
    if (!committed) return this.refused(row, log);
    this.deps.onFinished?.(row, model, 'COMPLETED', (Date.now() - started) / 1000);
    annotateSpan({ [STATUS_ATTRIBUTE]: 'COMPLETED' });
    if (committed.explanation) this.deps.doorbell.ring();
    log.info({ status: 'COMPLETED', explanation: committed.explanation?.id }, 'invocation completed');
    return false;
  }

  /** COMPLETED under the run's lease, with its explanation queued when one is asked for; undefined when the lease was lost. */
  private async commit(row: InvocationRow, model: ModelRow, response: string): Promise<{ explanation?: InvocationRow } | undefined> {
    const explainer = row.with_explanation ? await this.durably(() => modelsStore.liveExplainerOf(this.deps.db, model.id)) : undefined;
    if (!explainer) return (await this.durably(() => this.writes.complete(row, response))) ? {} : undefined;
    const explanation = await this.durably(() => invocationState.completeAndExplain(this.deps.db, row, response, explainer));
    return explanation && { explanation };
  }

  /** ERROR, or back to the queue with backoff when the model's policy retries the failure and attempts are left (then true). */
  private async failed(row: InvocationRow, model: ModelRow, error: unknown, started: number, log: Logger): Promise<boolean> {
    const { db, options } = this.deps;
    // Users read the reason: no internal URL or host in it (the logs below keep the full error).
    const reason = (error instanceof UpstreamError ? error.publicMessage : withoutAddresses((error as Error).message ?? '')) || 'The model server failed.';
    const policy = policyOfModel(model.retry_policy);
    // A re-run's attempts count from its re-run (`requeue`), not from the first run.
    const attempt = row.attempts - row.rerun_attempts;
    const retried = isTransient(error) && policy.retry_on.includes(failureKindOf(error));
    if (retried && attempt < policy.max_attempts) {
      log.warn({ err: error }, 'transient failure; retrying');
      const backoffMs = backoffAfter(policy, attempt, options.retryBackoffMs);
      if (!(await this.durably(() => invocationState.release(db, row, reason, backoffMs)))) return this.refused(row, log);
      annotateSpan({ [STATUS_ATTRIBUTE]: 'QUEUED', 'didyma.invocation.retry_in_ms': backoffMs });
      return true;
    }
    const final = retried ? `Failed after ${attempt} attempts: ${reason}` : reason;
    if (!(await this.durably(() => invocationState.fail(db, row, final, reason)))) return this.refused(row, log);
    this.deps.onFinished?.(row, model, 'ERROR', (Date.now() - started) / 1000);
    annotateSpan({ [STATUS_ATTRIBUTE]: 'ERROR' });
    log.warn({ err: error, status: 'ERROR' }, 'invocation failed');
    return false;
  }

  /** A write of the run refused: the invocation was cancelled (done with it), or its lease lost to another worker (LeaseLostError). */
  private async refused(row: InvocationRow, log: Logger): Promise<false> {
    const current = await this.durably(() => invocationsStore.byId(this.deps.db, row.id));
    if (current?.status === 'CANCELLED') {
      log.info({ status: 'CANCELLED' }, 'invocation cancelled while it ran: its result was dropped');
      return false;
    }
    log.warn('result refused: the lease was lost to another worker');
    throw new LeaseLostError(row);
  }

  /** The model's input: the body, plus the session context or the explained invocation. */
  private async inputOf(row: InvocationRow, model: ModelRow): Promise<InferenceInput> {
    const body = await inferenceBody(this.deps.db, this.deps.uploads, row, model);
    const input: InferenceInput = { modelCode: model.model_code, version: model.version, body, requestType: row.request_type };
    if (row.type === 'EXPLAIN' && row.related_to) {
      const explained = await invocationsStore.byId(this.deps.db, row.related_to);
      if (explained) input.context = [{ request: explained.body, response: explained.response }];
    } else if (model.need_context) {
      const earlier = await invocationsStore.contextBefore(this.deps.db, row, this.deps.options.context);
      input.context = earlier.map((e) => ({ request: e.body, response: e.response }));
    }
    return input;
  }

  /**
   * Retries a database step while the database is unreachable (a restart, a
   * failover), for at most one lease: a result already computed is not
   * thrown away. Other errors pass through at once.
   */
  private async durably<T>(work: () => Promise<T>): Promise<T> {
    const deadline = Date.now() + this.deps.options.leaseMs;
    for (let delay = 100; ; delay = Math.min(delay * 2, 2000)) {
      try {
        return await work();
      } catch (error) {
        if (!isDatabaseUnavailable(error) || Date.now() + delay > deadline) throw error;
        this.deps.logger.warn({ err: error }, 'database unavailable; retrying');
        await sleep(delay);
      }
    }
  }

  private async modelOf(id: number): Promise<ModelRow> {
    const cached = this.models.get(id);
    if (cached) return cached;
    const row = (await modelsStore.byId(this.deps.db, id))!;
    this.models.set(id, row);
    return row;
  }
}

const MODEL_CACHE_MS = 10_000;
/** How often runners waiting for queued work they could not take claim again, when no run of this executor ends first. */
const WAITING_TICK_MS = 100;
const RUNNERS_PER_CALL = 2;
/** How many executors a wake-up visits at most before the runs it counts are left to busy runners and polls. */
const MAX_RING_HOPS = 2;
/** How long a runner whose claim or run failed unexpectedly (the database gone past a lease) waits before it claims again. */
const RUNNER_FAILURE_PAUSE_MS = 1000;
