import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { ManagedProcess } from './model-servers.js';
import { testKeys, testSecretKeyFile } from './platform.js';

/**
 * `didyma <args>` in a child process of its own (from the sources, as
 * `cli/entry.ts` runs them), so a test can signal it as an orchestrator
 * would: SIGTERM, SIGKILL, SIGSTOP. It shares the test process's encryption
 * and token-verification keys and gets a data folder of its own.
 */
export function didymaProcess(name: string, args: string[], env: Record<string, string>): ManagedProcess & { dataDir: string } {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), `didyma-${name}-`));
  fs.writeFileSync(path.join(dataDir, 'jwt-public.pem'), testKeys.publicKey.export({ type: 'spki', format: 'pem' }));
  const child = new ManagedProcess(name, process.execPath, ['--import', 'tsx', 'cli/entry.ts', ...args], {
    cwd: process.cwd(),
    env: {
      ...process.env,
      DIDYMA_DATA_DIR: dataDir,
      DIDYMA_SECRET_KEY_FILE: testSecretKeyFile,
      DIDYMA_JWT_PUBLIC_KEY_FILE: path.join(dataDir, 'jwt-public.pem'),
      DIDYMA_DEV_MODE: 'true',
      DIDYMA_LOG_LEVEL: 'warn',
      ...env,
    },
  });
  void child.exited.then(() => fs.rmSync(dataDir, { recursive: true, force: true }));
  return Object.assign(child, { dataDir });
}

/** Waits for a process to exit by itself; fails naming it, with its output, after `timeoutMs`. */
export async function exitOf(child: ManagedProcess, timeoutMs: number): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  const exited = await Promise.race([child.exited.then(() => true), sleep(timeoutMs).then(() => false)]);
  if (!exited) throw new Error(`${child.name} did not exit within ${Math.round(timeoutMs / 1000)} s. Its output:\n${child.tail()}`);
  return { code: child.child.exitCode, signal: child.child.signalCode };
}
