import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** A `didyma dev` child process on five consecutive ports: auth, private, public, demo model server, executor. */
export interface DevProcess {
  urls: { auth: string; private: string; public: string; demo: string };
  output(): string;
  stop(): Promise<void>;
}

/**
 * Starts `didyma dev` on a fresh data folder, below Linux's range of outgoing ports so no client of
 * another test takes one meanwhile; ports that another program holds: new ports, up to three times.
 */
export async function startDevProcess(adminPassword: string): Promise<DevProcess> {
  for (let attempt = 1; ; attempt++) {
    const port = 20000 + Math.floor(Math.random() * 12000);
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'didyma-dev-'));
    let output = '';
    const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', 'cli/entry.ts', 'dev'], {
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        DIDYMA_DATA_DIR: dataDir,
        DIDYMA_AUTH_PORT: String(port),
        DIDYMA_PRIVATE_PORT: String(port + 1),
        DIDYMA_PUBLIC_PORT: String(port + 2),
        DIDYMA_DEMO_MODEL_SERVER_PORT: String(port + 3),
        DIDYMA_EXECUTOR_PORT: String(port + 4),
        DIDYMA_ADMIN_PASSWORD: adminPassword,
        DIDYMA_LOG_LEVEL: 'warn',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout!.on('data', (chunk) => (output += chunk));
    child.stderr!.on('data', (chunk) => (output += chunk));
    for (let i = 0; i < 900 && child.exitCode === null && !output.includes('didyma is running') && !output.includes('EADDRINUSE'); i++) await new Promise((r) => setTimeout(r, 100));
    const stop = async () => {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        await new Promise((resolve) => child.once('exit', resolve));
      }
      fs.rmSync(dataDir, { recursive: true, force: true });
    };
    if (output.includes('didyma is running')) {
      const url = (offset: number) => `http://127.0.0.1:${port + offset}`;
      return { urls: { auth: url(0), private: url(1), public: url(2), demo: url(3) }, output: () => output, stop };
    }
    await stop();
    if (!output.includes('EADDRINUSE') || attempt === 3) throw new Error(`didyma dev did not start:\n${output}`);
  }
}
