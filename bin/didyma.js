#!/usr/bin/env node
// Thin launcher: the compiled CLI lives in dist/ (built by `npm run build`).
import { main } from '../dist/cli/main.js';

main(process.argv).catch((error) => {
  console.error(error instanceof Error ? error.message : error);
  process.exitCode = 1;
});
