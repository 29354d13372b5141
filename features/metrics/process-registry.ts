import { Registry, collectDefaultMetrics } from 'prom-client';
import { METRIC_PREFIX } from './names.js';

let registry: Registry | undefined;

/**
 * CPU, memory, event-loop and GC figures of this process. They belong to the
 * process, not to a platform, so they are collected once however many
 * platforms the process builds (tests build dozens) and shared by every
 * `/metrics` the process serves.
 */
export function processRegistry(): Registry {
  if (!registry) {
    registry = new Registry();
    collectDefaultMetrics({ register: registry, prefix: METRIC_PREFIX });
  }
  return registry;
}
