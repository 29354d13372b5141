import type { Logger } from 'pino';
import type { Db } from '../../infra/db/database.js';
import type { SecretBox } from '../../infra/crypto/secrets.js';
import type { DeliveryResult } from '../../infra/net/delivery-client.js';
import { excerptOf } from '../../infra/net/excerpt.js';
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
 * A new delivery wakes the loop through the change feed; the poll is the
 * fallback.
 */
export class WebhookDeliverer {
  private readonly inFlight = new Set<Promise<void>>();
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private again = false;
  private stopped = true;
  private unsubscribe: (() => void) | undefined;

  constructor(
    private readonly db: Db,
    private readonly store: Pick<WebhookDeliveriesStore, 'claimDue' | 'finish'>,
    private readonly post: Poster,
    private readonly box: SecretBox,
    private readonly logger: Logger,
    private readonly options: DelivererOptions,
    private readonly now: () => number = Date.now,
  ) {}

  /** `wakeUps` calls its listener when deliveries may have been queued; it returns how to stop listening. */
  start(wakeUps?: (listener: () => void) => () => void): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.unsubscribe = wakeUps?.(() => this.kick());
    this.schedule(0);
  }

  /** Look for due deliveries now rather than at the next poll. */
  kick(): void {
    if (this.stopped) return;
    if (this.running) this.again = true;
    else this.schedule(0);
  }

  /** Stops claiming and waits for the attempts in flight to be recorded. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.unsubscribe?.();
    if (this.timer) clearTimeout(this.timer);
    await this.running;
    await Promise.allSettled([...this.inFlight]);
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

  private schedule(delayMs: number): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.tick(), delayMs);
    this.timer.unref();
  }

  private async tick(): Promise<void> {
    if (this.stopped || this.running) return;
    let failed = false;
    this.running = this.runOnce().then(
      () => undefined,
      (error: unknown) => {
        failed = true;
        this.logger.warn({ err: error }, 'could not claim webhook deliveries; will retry');
      },
    );
    await this.running;
    this.running = undefined;
    if (this.stopped) return;
    const soon = this.again && !failed;
    this.again = false;
    this.schedule(soon ? 0 : this.options.pollMs);
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
