import { NodeSDK } from '@opentelemetry/sdk-node';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { ExpressInstrumentation } from '@opentelemetry/instrumentation-express';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { AmqplibInstrumentation } from '@opentelemetry/instrumentation-amqplib';
import { PinoInstrumentation } from '@opentelemetry/instrumentation-pino';
import type { Telemetry } from './preload.js';

/** Paths of probes and scrapes: polled all day, they would drown the traces of work. */
const UNTRACED_PATHS = new Set(['/healthz', '/readyz', '/livez', '/metrics']);

/**
 * The OpenTelemetry Node SDK with the instrumentations of the libraries
 * didyma talks through, configured by the standard OTEL_* variables. Only
 * traces: metrics stay with Prometheus and logs with stdout, unless the
 * variables name exporters for them.
 */
export function startTracing(env: NodeJS.ProcessEnv): Telemetry {
  env.OTEL_METRICS_EXPORTER ||= 'none';
  env.OTEL_LOGS_EXPORTER ||= 'none';
  const sdk = new NodeSDK({
    instrumentations: [
      new HttpInstrumentation({ ignoreIncomingRequestHook: (request) => UNTRACED_PATHS.has((request.url ?? '').split('?')[0]!) }),
      new ExpressInstrumentation(),
      // Statement text only, never the values bound to it (bodies, hashes, secrets).
      new PgInstrumentation({ enhancedDatabaseReporting: false }),
      new AmqplibInstrumentation(),
      new PinoInstrumentation(),
    ],
  });
  sdk.start();
  return { shutdown: () => sdk.shutdown() };
}
