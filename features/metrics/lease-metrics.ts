import { Counter, Registry } from 'prom-client';
import { metricNames } from './names.js';

/** What a process's sweeper returned to the queue: runs whose executor died or stalled before its lease ran out. */
export class LeaseMetrics {
  readonly registry = new Registry();
  private readonly expired = new Counter({
    name: metricNames.invocationLeasesExpired,
    help: 'Runs this process’s sweeper returned to the queue because their executor stopped renewing the lease (it died, was killed, or stalled).',
    registers: [this.registry],
  });

  /** One sweep returned `count` runs. */
  returned(count: number): void {
    this.expired.inc(count);
  }
}
