// Runs the CLI from the TypeScript sources (`node --import tsx cli/entry.ts …`),
// as tests do for child processes; the installed command uses bin/didyma.js.
import { main } from './main.js';

main(process.argv).catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exitCode = 1;
});
