import { spawn } from 'node:child_process';
import path from 'node:path';
import { expect } from 'chai';
import { startDevProcess, type DevProcess } from '../support/dev-process.js';

const ADMIN_PASSWORD = 'Python-Sdk-Pass-42';
const SDK = path.resolve('sdk/python');

/** Runs the Python SDK's pytest suite (sdk/python/tests) against a real `didyma dev` process. */
describe('Python SDK and CLI (pytest) against `didyma dev`', function () {
  this.timeout(600_000);
  let dev: DevProcess;

  before(async function () {
    if (!process.env.TEST_PYTHON_VENV) {
      throw new Error('TEST_PYTHON_VENV is not set: run `bash scripts/services/all.sh start python` and eval "$(bash scripts/services/all.sh env python)"');
    }
    dev = await startDevProcess(ADMIN_PASSWORD);
  });
  after(async () => {
    await dev?.stop();
  });

  it('passes the whole pytest suite: walkthrough, CLI, paging, errors, tenancy, the export and the OpenAPI contract', async () => {
    const python = path.join(process.env.TEST_PYTHON_VENV!, 'python');
    const { code, output } = await new Promise<{ code: number | null; output: string }>((resolve, reject) => {
      const child = spawn(python, ['-m', 'pytest', '-q', '-p', 'no:cacheprovider', 'tests'], {
        cwd: SDK,
        env: {
          PATH: process.env.PATH,
          HOME: process.env.HOME,
          PYTHONPATH: path.join(SDK, 'src'),
          PYTHONDONTWRITEBYTECODE: '1',
          DIDYMA_TEST_AUTH_URL: dev.urls.auth,
          DIDYMA_TEST_PRIVATE_URL: dev.urls.private,
          DIDYMA_TEST_PUBLIC_URL: dev.urls.public,
          DIDYMA_TEST_DEMO_URL: dev.urls.demo,
          DIDYMA_TEST_ADMIN_PASSWORD: ADMIN_PASSWORD,
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let text = '';
      child.stdout.on('data', (chunk) => (text += chunk));
      child.stderr.on('data', (chunk) => (text += chunk));
      child.on('error', reject);
      child.on('close', (exit) => resolve({ code: exit, output: text }));
    });
    expect(code, `pytest failed:\n${output}\n--- didyma dev ---\n${dev.output().slice(-4000)}`).to.equal(0);
    expect(output).to.match(/\d+ passed/);
    expect(output).to.not.match(/skipped|xfail/);
  });
});
