import { spawn } from 'node:child_process';
import path from 'node:path';
import { requireEnv } from './services.js';

// The Python CLI and SDK (sdk/python) as a person runs them, from the test venv (scripts/services/python.sh).

/** Python with the SDK, and the CLI's own saved login (DIDYMA_CONFIG): each run's output lines as they come, and its exit. */
export function pythonCli(config: string) {
  const python = path.join(requireEnv('TEST_PYTHON_VENV', 'python'), 'python');
  const sdk = path.resolve('sdk/python/src');
  return {
    /** `didyma ARGS…`; with `script`, `python -c script ARGS…` instead. */
    run(args: string[], script?: string) {
      const child = spawn(python, script ? ['-c', script, ...args] : ['-m', 'didyma', ...args], {
        env: { PATH: process.env.PATH, HOME: process.env.HOME, PYTHONPATH: sdk, PYTHONDONTWRITEBYTECODE: '1', DIDYMA_CONFIG: config },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let output = '';
      const waiting: Array<() => void> = [];
      const take = (chunk: Buffer) => {
        output += chunk;
        waiting.splice(0).forEach((wake) => wake());
      };
      child.stdout.on('data', take);
      child.stderr.on('data', take);
      const exit = new Promise<{ code: number | null; output: string }>((resolve) => child.on('close', (code) => resolve({ code, output })));
      /** The first match of `pattern` in the output, once it has been printed. */
      const line = async (pattern: RegExp): Promise<string> => {
        for (;;) {
          const match = pattern.exec(output);
          if (match) return match[1]!;
          if (child.exitCode !== null) throw new Error(`the CLI ended without printing ${pattern}: ${output}`);
          await Promise.race([new Promise<void>((wake) => waiting.push(wake)), exit]);
        }
      };
      return { line, exit };
    },
  };
}
