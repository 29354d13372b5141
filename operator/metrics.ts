import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { METRIC_PREFIX } from '../features/metrics/names.js';

export type OperatorMetrics = ReturnType<typeof createOperatorMetrics>;

/** The operator's own figures, scraped from its /metrics with the process ones. */
export function createOperatorMetrics() {
  const registry = new Registry();
  return {
    registry,
    reconciles: new Counter({
      name: `${METRIC_PREFIX}operator_reconciles_total`,
      help: 'Reconciles by kind and result (ready, not-ready, invalid, gone, finalized, error).',
      labelNames: ['kind', 'result'] as const,
      registers: [registry],
    }),
    reconcileDuration: new Histogram({
      name: `${METRIC_PREFIX}operator_reconcile_duration_seconds`,
      help: 'Time of one reconcile, health probes included.',
      labelNames: ['kind'] as const,
      buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: [registry],
    }),
    queueDepth: new Gauge({ name: `${METRIC_PREFIX}operator_queue_depth`, help: 'Keys waiting in the work queue.', labelNames: ['kind'] as const, registers: [registry] }),
    leader: new Gauge({ name: `${METRIC_PREFIX}operator_leader`, help: '1 while this replica holds the leader Lease and reconciles, else 0.', registers: [registry] }),
  };
}
