import { NodeSDK } from '@opentelemetry/sdk-node';
import type { Instrumentation } from '@opentelemetry/instrumentation';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { AmqplibInstrumentation } from '@opentelemetry/instrumentation-amqplib';
import { PinoInstrumentation } from '@opentelemetry/instrumentation-pino';
import type { Telemetry } from './telemetry.js';
import { KeepRequestedSampler, samplerFromEnv } from './sampler.js';

/** The instrumentations by the names OTEL_NODE_ENABLED_INSTRUMENTATIONS and OTEL_NODE_DISABLED_INSTRUMENTATIONS use. */
const INSTRUMENTATIONS: Record<string, () => Instrumentation> = {
  // Outgoing calls only (model servers, registries, webhooks): the servers make their requests' spans (server-span.ts).
  http: () => new HttpInstrumentation({ disableIncomingRequestInstrumentation: true }),
  // Statement text only, never the values bound to it (bodies, hashes, secrets); and only within a
  // traced request or run: the background loops' polls would each start a trace of their own.
  pg: () => new PgInstrumentation({ enhancedDatabaseReporting: false, requireParentSpan: true }),
  amqplib: () => new AmqplibInstrumentation(),
  // Log lines get the ids of their span; they stay on stdout, not sent as OpenTelemetry logs.
  pino: () => new PinoInstrumentation({ disableLogSending: true }),
};

const names = (value: string | undefined) => (value ?? '').split(',').map((name) => name.trim()).filter(Boolean);

/** The instrumentations the variables leave on: all of them unless they name some. */
export function instrumentationNames(env: NodeJS.ProcessEnv): string[] {
  const enabled = names(env.OTEL_NODE_ENABLED_INSTRUMENTATIONS);
  const disabled = new Set(names(env.OTEL_NODE_DISABLED_INSTRUMENTATIONS));
  return Object.keys(INSTRUMENTATIONS).filter((name) => (!enabled.length || enabled.includes(name)) && !disabled.has(name));
}

/**
 * The OpenTelemetry Node SDK with the instrumentations of the libraries
 * didyma talks through, configured by the standard OTEL_* variables. Not
 * express's: the operations are routed by the OpenAPI dispatcher, which names
 * the request's span by its route, and a span per middleware would cost more
 * than the request's own work (bench (9)). Only traces: metrics stay with
 * Prometheus and logs with stdout, unless the variables name exporters for them.
 * The sampler is the one the variables name, but it records the spans the
 * executor keeps whatever the head decision (failed or slow runs, kept-runs.ts).
 */
export function startTracing(env: NodeJS.ProcessEnv): Telemetry {
  env.OTEL_METRICS_EXPORTER ||= 'none';
  env.OTEL_LOGS_EXPORTER ||= 'none';
  const sdk = new NodeSDK({ sampler: new KeepRequestedSampler(samplerFromEnv(env)), instrumentations: instrumentationNames(env).map((name) => INSTRUMENTATIONS[name]!()) });
  sdk.start();
  return { shutdown: () => sdk.shutdown() };
}
