import { Counter, Histogram, Registry } from 'prom-client';
import { metricNames } from './names.js';

// From a few seconds (a receiver up) to the whole retry schedule (a day and more).
const DELIVERY_BUCKETS = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 1800, 7200, 36000, 100000];

/** How an attempt ended: `retry` waits for the next one of the schedule, `failed` was the last. */
export type WebhookAttemptOutcome = 'delivered' | 'retry' | 'failed';

/**
 * What the webhook deliverer observes in a process: attempts by outcome, and
 * the time from queueing a delivery to the receiver's 2xx (first deliveries
 * only; a redelivery's would count the time it sat delivered or failed).
 */
export class WebhookMetrics {
  readonly registry = new Registry();
  private readonly attempts = new Counter({
    name: metricNames.webhookAttempts,
    help: 'Webhook delivery attempts this process made, by outcome (delivered, retry, failed).',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });
  private readonly latency = new Histogram({
    name: metricNames.webhookDelivery,
    help: 'Time from queueing a webhook delivery (the state change that made it) to its receiver’s 2xx, in seconds.',
    buckets: DELIVERY_BUCKETS,
    registers: [this.registry],
  });

  /** One attempt ended; `queuedAt` and `firstRound` say whether and what to observe of a delivery. */
  attempted(outcome: WebhookAttemptOutcome, queuedAt: Date, firstRound: boolean, now = Date.now()): void {
    this.attempts.inc({ outcome });
    if (outcome === 'delivered' && firstRound) this.latency.observe(Math.max(0, now - new Date(queuedAt).getTime()) / 1000);
  }
}
