// Runs the CLI from the TypeScript sources (`node --import tsx cli/entry.ts …`),
// as tests do for child processes; the installed command uses bin/didyma.js.
import { startTelemetry } from '../infra/telemetry/preload.js';

const telemetry = await startTelemetry(process.argv, process.env);
const { main } = await import('./main.js');
main(process.argv)
  .catch((error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exitCode = 1;
  })
  // The spans of the last requests leave before the process does.
  .finally(() => telemetry?.shutdown());
