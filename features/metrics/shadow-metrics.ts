import { Counter, Registry } from 'prom-client';
import type { ShadowDispatch, ShadowDrop } from '../invocations/shadows.js';
import { METRIC_PREFIX } from './names.js';

/** The shadow invocations this process dropped, read from its dispatch at each scrape. */
export function shadowRegistry(shadows: Pick<ShadowDispatch, 'dropped'>): Registry {
  const registry = new Registry();
  const counted: Record<ShadowDrop, number> = { queue_full: 0, backlog: 0, failed: 0 };
  new Counter({
    name: `${METRIC_PREFIX}shadow_invocations_dropped_total`,
    help: "Shadow invocations not queued: the workspace's max_queued refused them (queue_full), the process had too many copies under way (backlog), or their append failed (failed).",
    labelNames: ['reason'],
    registers: [registry],
    collect() {
      for (const reason of Object.keys(counted) as ShadowDrop[]) {
        this.inc({ reason }, shadows.dropped[reason] - counted[reason]);
        counted[reason] = shadows.dropped[reason];
      }
    },
  });
  return registry;
}
