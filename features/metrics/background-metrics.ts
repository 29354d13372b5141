import { Counter, Histogram, Registry } from 'prom-client';
import type { TaskObserver } from '../../infra/process/scheduler.js';
import { metricNames } from './names.js';

// From a sweeper pass on an idle database (a millisecond) to a purge or resync held up for minutes.
const RUN_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300];

/** What the scheduler of a process observes: each background task's runs, failures and run time, by task name. */
export class BackgroundTaskMetrics implements TaskObserver {
  readonly registry = new Registry();
  private readonly runs = new Counter({
    name: metricNames.backgroundTaskRuns,
    help: 'Runs of each background task of this process (sweeper, deliverer, purges, resync), failed ones included.',
    labelNames: ['task'] as const,
    registers: [this.registry],
  });
  private readonly failures = new Counter({
    name: metricNames.backgroundTaskFailures,
    help: 'Runs of each background task of this process that failed; the task then backs off.',
    labelNames: ['task'] as const,
    registers: [this.registry],
  });
  private readonly duration = new Histogram({
    name: metricNames.backgroundTaskDuration,
    help: 'How long each run of a background task took, in seconds, failed runs included.',
    labelNames: ['task'] as const,
    buckets: RUN_BUCKETS,
    registers: [this.registry],
  });

  /** A started task's counters show 0 at once, so a rate over them is defined before its first failure. */
  started(task: string): void {
    this.runs.inc({ task }, 0);
    this.failures.inc({ task }, 0);
  }

  ran(task: string, seconds: number, failed: boolean): void {
    this.runs.inc({ task });
    if (failed) this.failures.inc({ task });
    this.duration.observe({ task }, seconds);
  }
}
