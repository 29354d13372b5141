import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { createDatabase } from '../infra/db/database.js';
import { verifyPassword } from '../features/auth/passwords.js';

const EMAIL = 'operator@example.test';

describe('didyma admin reset-password', function () {
  this.timeout(120_000);
  let dataDir: string;

  /** `didyma <args>` on its own embedded database, `input` on its standard input. */
  function didyma(args: string[], input = ''): Promise<{ code: number | null; stdout: string; stderr: string }> {
    const env = { PATH: process.env.PATH, HOME: process.env.HOME, DIDYMA_DATA_DIR: dataDir, DIDYMA_LOG_LEVEL: 'warn', DIDYMA_ADMIN_EMAIL: EMAIL, DIDYMA_ADMIN_PASSWORD: 'First-Pass-4242' };
    const child = spawn(process.execPath, ['--import', 'tsx', 'cli/entry.ts', ...args], { env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.stdin.end(input);
    return new Promise((resolve, reject) => {
      child.on('error', reject);
      child.on('close', (code) => resolve({ code, stdout, stderr }));
    });
  }

  async function passwordHash(): Promise<string> {
    const db = createDatabase({ pgliteDir: path.join(dataDir, 'db') });
    try {
      return ((await db('users').where({ email: EMAIL }).first()) as { password_hash: string }).password_hash;
    } finally {
      await db.destroy();
    }
  }

  before(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'didyma-reset-'));
    const bootstrapped = await didyma(['admin', 'bootstrap']);
    expect(bootstrapped.code, bootstrapped.stderr).to.equal(0);
  });
  after(() => fs.rmSync(dataDir, { recursive: true, force: true }));

  it('takes the new password from standard input with --password-stdin, and prints none', async () => {
    const done = await didyma(['admin', 'reset-password', EMAIL, '--password-stdin'], 'Piped-In-Pass-4242\n');
    expect(done.code, done.stderr).to.equal(0);
    expect(done.stdout).to.equal(`${EMAIL}: password changed; 0 sign-ins ended\n`);
    expect(await verifyPassword(await passwordHash(), 'Piped-In-Pass-4242')).to.equal(true);
  });

  it('generates a password and prints it once without the option', async () => {
    const done = await didyma(['admin', 'reset-password', EMAIL]);
    expect(done.code, done.stderr).to.equal(0);
    const generated = /new password (\S+) {2}\(generated: shown only now\)/.exec(done.stdout)?.[1];
    expect(generated, done.stdout).to.be.a('string');
    expect(await verifyPassword(await passwordHash(), generated!)).to.equal(true);
  });

  // Weak passwords and unknown users: features/identity/admin.test.ts.
  it('fails with a message, changing nothing, when standard input is empty', async () => {
    const before = await passwordHash();
    const empty = await didyma(['admin', 'reset-password', EMAIL, '--password-stdin']);
    expect(empty.code).to.equal(1);
    expect(empty.stderr).to.include('Nothing on standard input');
    expect(await passwordHash()).to.equal(before);
  });
});
