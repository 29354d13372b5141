#!/usr/bin/env node
// Thin launcher: the compiled CLI lives in dist/ (built by `npm run build`).
// Tracing, when the OTEL_* variables ask for it, starts before the CLI is imported.
import { startTelemetry } from '../dist/infra/telemetry/preload.js';

const telemetry = await startTelemetry(process.argv, process.env);
const { main } = await import('../dist/cli/main.js');
main(process.argv)
  .catch((error) => {
    console.error(error instanceof Error ? error.message : error);
    process.exitCode = 1;
  })
  // The spans of the last requests leave before the process does.
  .finally(() => telemetry?.shutdown());
