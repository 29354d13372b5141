import { Counter, Registry } from 'prom-client';
import type { AuditTrail } from '../audit/trail.js';
import { METRIC_PREFIX } from './names.js';

/** The audit records the flood limit dropped in this process, read from the trail at each scrape. */
export function auditRegistry(trail: Pick<AuditTrail, 'dropped'>): Registry {
  const registry = new Registry();
  let counted = 0;
  new Counter({
    name: `${METRIC_PREFIX}audit_records_dropped_total`,
    help: 'Audit records of refused requests dropped by the flood limit (DIDYMA_AUDIT_REFUSED_PER_MINUTE).',
    registers: [registry],
    collect() {
      const dropped = trail.dropped;
      this.inc(dropped - counted);
      counted = dropped;
    },
  });
  return registry;
}
