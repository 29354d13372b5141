import type { Logger } from 'pino';
import type { Db } from '../../infra/db/database.js';
import type { SecretBox } from '../../infra/crypto/secrets.js';
import type { DeliveryResult } from '../../infra/net/delivery-client.js';
import { excerptOf } from '../../infra/net/excerpt.js';
import type { ScheduledTask, Scheduler } from '../../infra/process/scheduler.js';
import type { AttemptOutcome, ClaimCaps, ClaimedDelivery, WebhookDeliveriesStore } from './deliveries.store.js';
import { retryDelayMs } from './schedule.js';
import { webhookHeaders } from './signature.js';

export interface DelivererOptions {
  /** The waits between attempts after the first; the delivery fails after the last. */
  schedule: readonly number[];
  pollMs: number;
  /** Deliveries in flight at once in this process. */
  concurrency: number;
  /** Deliveries in flight at once across processes: of one workspace, of one endpoint. */
  caps: ClaimCaps;
  /** A claim outlives the attempt's own deadlines by this much: only a deliverer that died loses one. */
  leaseMs: number;
  random?: () => number;
  /** Told how each attempt ended (metrics): `firstRound` is false for a redelivery's attempts. */
  onAttempt?: (outcome: 'delivered' | 'retry' | 'failed', queuedAt: Date, firstRound: boolean) => void;
}

/** Sends one signed body; any answer resolves (DeliveryClient). */
export type Poster = (url: string, headers: Record<string, string>, body: string) => Promise<DeliveryResult>;

const DISABLED = 'The endpoint is disabled; nothing was sent.';

/**
 * Sends the outbox of webhook deliveries, in its own loop: the transactions
 * that queue them (a finished invocation, an exported dataset) never wait on
 * a receiver. Each pass claims due deliveries under a lease, in turns between
 * workspaces and within their caps (claimDue), so any number of processes
 * deliver at once without sending one attempt twice, and one workspace's slow
 * receivers hold only its own slots; each result is written under its claim.
 * A new delivery wakes the task through the change feed; the poll is the
 * fallback.
 */
export class WebhookDeliverer {
  private readonly inFlight = new Set<Promise<void>>();
  private readonly task: ScheduledTask;
  private unsubscribe: (() => void) | undefined;

  constructor(
    private readonly db: Db,
    private readonly store: Pick<WebhookDeliveriesStore, 'claimDue' | 'finish'>,
    private readonly post: Poster,
    private readonly box: SecretBox,
    private readonly logger: Logger,
    private readonly options: DelivererOptions,
    scheduler: Scheduler,
    private readonly now: () => number = Date.now,
  ) {
    this.task = scheduler.add({
      name: 'webhook_deliverer',
      intervalMs: options.pollMs,
      run: () => this.runOnce(),
      // Claiming has stopped: the attempts in flight are recorded before the process goes.
      afterStop: async () => {
        this.unsubscribe?.();
        this.unsubscribe = undefined;
        await Promise.allSettled([...this.inFlight]);
      },
    });
  }

  /** `wakeUps` calls its listener when deliveries may have been queued; it returns how to stop listening. */
  start(wakeUps?: (listener: () => void) => () => void): void {
    this.unsubscribe ??= wakeUps?.(() => this.kick());
    this.task.start();
  }

  /** Look for due deliveries now rather than at the next poll. */
  kick(): void {
    this.task.wake();
  }

  /** Stops claiming and waits for the attempts in flight to be recorded. */
  async stop(): Promise<void> {
    await this.task.stop();
  }

  /** One pass: claims what this process has room for and starts sending it. */
  async runOnce(): Promise<number> {
    const room = this.options.concurrency - this.inFlight.size;
    if (room <= 0) return 0;
    const claimed = await this.store.claimDue(this.db, room, this.options.leaseMs, this.options.caps);
    for (const claim of claimed) {
      const attempt = this.attempt(claim).finally(() => {
        this.inFlight.delete(attempt);
        this.kick();
      });
      this.inFlight.add(attempt);
    }
    return claimed.length;
  }

  private async attempt(claim: ClaimedDelivery): Promise<void> {
    const startedAt = new Date(this.now());
    const started = performance.now();
    const result = claim.endpoint_enabled ? await this.send(claim) : { error: DISABLED };
    if ('diagnosis' in result) this.logger.info({ deliveryId: claim.id, diagnosis: result.diagnosis }, 'a webhook attempt was refused by the outbound URL policy');
    const outcome = this.outcomeOf(claim, result, startedAt, Math.round(performance.now() - started));
    this.options.onAttempt?.(outcome.status === 'pending' ? 'retry' : outcome.status, claim.created_at, claim.round_attempt === claim.attempts);
    try {
      await this.store.finish(this.db, claim, outcome);
    } catch (error) {
      // Its lease runs out and another pass sends it again, with the same webhook-id.
      this.logger.warn({ err: error, deliveryId: claim.id }, 'could not record a webhook attempt; it will be sent again');
    }
  }

  private async send(claim: ClaimedDelivery): Promise<DeliveryResult> {
    try {
      const secret = this.box.open(claim.secret_sealed);
      const headers = webhookHeaders(secret, claim.id, Math.floor(this.now() / 1000), claim.payload);
      return await this.post(claim.target_url, headers, claim.payload);
    } catch (error) {
      this.logger.error({ err: error, deliveryId: claim.id }, 'a webhook attempt failed inside the platform');
      return { error: 'The platform could not send it (an internal error; see its logs).' };
    }
  }

  /** 2xx is delivered; anything else waits for the next attempt of the schedule, or fails after the last. */
  private outcomeOf(claim: ClaimedDelivery, result: DeliveryResult, startedAt: Date, durationMs: number): AttemptOutcome {
    const answered = 'status' in result;
    const attempt = {
      started_at: startedAt,
      duration_ms: durationMs,
      status_code: answered ? result.status : null,
      response: answered ? excerptOf(result.body, undefined) : null,
      error: answered ? (result.status >= 200 && result.status < 300 ? null : `The receiver answered HTTP ${result.status}.`) : result.error,
    };
    if (attempt.error === null) return { attempt, status: 'delivered' };
    const delay = !answered && result.error === DISABLED ? null : retryDelayMs(this.options.schedule, claim.round_attempt, this.options.random);
    if (delay === null) return { attempt, status: 'failed' };
    return { attempt, status: 'pending', nextAttemptAt: new Date(this.now() + delay) };
  }
}
