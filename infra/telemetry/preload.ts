import { register } from 'node:module';
import type { Telemetry } from './telemetry.js';

/**
 * Whether the standard OpenTelemetry variables ask for traces: an exporter
 * named in OTEL_TRACES_EXPORTER (not `none`), or an OTLP endpoint, and the
 * SDK not disabled. Without either, nothing of the SDK is even loaded.
 */
export function tracingRequested(env: NodeJS.ProcessEnv): boolean {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return false;
  const exporters = (env.OTEL_TRACES_EXPORTER ?? '').split(',').map((name) => name.trim()).filter(Boolean);
  if (exporters.length) return exporters.some((name) => name !== 'none');
  return Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT);
}

/** The service name a process reports unless OTEL_SERVICE_NAME says otherwise: `didyma-<role>` from its command line. */
export function serviceNameOf(argv: readonly string[]): string {
  const [command, role] = argv.slice(2);
  if (command === 'serve') return `didyma-${role ?? 'all'}`;
  return command ? `didyma-${command}` : 'didyma';
}

/**
 * Starts tracing before the rest of the process is imported, as the ESM
 * loader hook must see express, pg, amqplib and pino load to instrument them.
 * A configuration the SDK refuses costs a warning, never the process. `env`
 * is the process environment: the SDK reads the rest of its settings there.
 */
export async function startTelemetry(argv: readonly string[], env: NodeJS.ProcessEnv): Promise<Telemetry | undefined> {
  if (!tracingRequested(env)) return undefined;
  env.OTEL_SERVICE_NAME ||= serviceNameOf(argv);
  try {
    const { createAddHookMessageChannel } = await import('import-in-the-middle');
    const { registerOptions, waitForAllMessagesAcknowledged } = createAddHookMessageChannel();
    register('import-in-the-middle/hook.mjs', import.meta.url, registerOptions);
    const { startTracing } = await import('./tracing.js');
    const telemetry = startTracing(env);
    await waitForAllMessagesAcknowledged();
    return telemetry;
  } catch (error) {
    process.emitWarning(`Tracing is off: ${(error as Error).message}`, { code: 'DIDYMA_TRACING' });
    return undefined;
  }
}
