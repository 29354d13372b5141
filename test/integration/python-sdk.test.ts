import { spawn } from 'node:child_process';
import path from 'node:path';
import { expect } from 'chai';
import { login, makeUser, makeWorkspace, PASSWORD, startTestPlatform, unique, type TestPlatform } from '../support/platform.js';
import { startDemoModelServer } from '../support/fixtures.js';
import { startExecutor } from '../../executor/start.js';
import { createDemoModelServer, type DemoModelServer } from '../../demo/model-server/server.js';

const SDK = path.resolve('sdk/python');
const SLOW_INFERENCE_MS = 2000;

// The whole suite's bound, under mocha's timeout so that a run cut short still shows its output
// (a test past pyproject.toml's faulthandler_timeout has printed every thread's stack by then).
const PYTEST_BOUND_MS = 540_000;

/** pytest's output and exit code (null when it was killed at PYTEST_BOUND_MS). */
function pytest(env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  const python = path.join(process.env.TEST_PYTHON_VENV!, 'python');
  return new Promise((resolve, reject) => {
    const child = spawn(python, ['-m', 'pytest', '-q', '-p', 'no:cacheprovider', 'tests'], {
      cwd: SDK,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, PYTHONPATH: path.join(SDK, 'src'), PYTHONDONTWRITEBYTECODE: '1', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    const bound = setTimeout(() => {
      output += `\n[killed after ${PYTEST_BOUND_MS / 1000} s]\n`;
      child.kill('SIGKILL');
    }, PYTEST_BOUND_MS);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(bound);
      resolve({ code, output });
    });
  });
}

/**
 * Runs the Python SDK's pytest suite (sdk/python/tests) against a platform in this process, with
 * an executor and the demo model server: the credentials only the dashboard or an operator makes
 * (an API token, an OAuth application) are made here and handed to pytest.
 */
describe('Python SDK and CLI (pytest) against a running platform', function () {
  this.timeout(600_000);
  let t: TestPlatform;
  let executor: Awaited<ReturnType<typeof startExecutor>>;
  let demo: DemoModelServer & { url: string };
  // Invocations that stay unfinished long enough to wait on, cancel and cut connections under.
  let slowDemo: DemoModelServer;
  let slowDemoUrl: string;
  const version = unique('v');
  const slowVersion = `${version}-slow`;

  before(async function () {
    if (!process.env.TEST_PYTHON_VENV) {
      throw new Error('TEST_PYTHON_VENV is not set: run `bash scripts/services/all.sh start python` and eval "$(bash scripts/services/all.sh env python)"');
    }
    t = await startTestPlatform({ exposeTokenApi: true });
    executor = await startExecutor(t.platform);
    demo = await startDemoModelServer(version);
    slowDemo = createDemoModelServer({ version: slowVersion, inferenceDelayMs: SLOW_INFERENCE_MS });
    slowDemoUrl = (await slowDemo.listen(0, '127.0.0.1')).url;
  });
  after(async () => {
    await executor?.close();
    await demo?.close();
    await slowDemo?.close();
    await t?.close();
  });

  it('passes the whole pytest suite: walkthrough, CLI, logins, paging, errors, tenancy, the export and the OpenAPI contract', async () => {
    const admin = await makeUser(t.platform, { staff: true });
    const ws = await makeWorkspace(t.platform, [[admin, 'supervisor']]);
    const principal = await t.platform.authenticator.authenticate((await login(t.auth, admin, ws.name)).access);
    const tomorrow = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
    const apiToken = await t.platform.identity.apiTokens.create(principal, ws.id, { name: 'pytest', expiration_date: tomorrow });
    const app = await t.platform.identity.oauth.create(null, ws.id, { name: 'pytest', role: 'user' });

    const { code, output } = await pytest({
      DIDYMA_TEST_AUTH_URL: t.auth.baseUrl,
      DIDYMA_TEST_PRIVATE_URL: t.private.baseUrl,
      DIDYMA_TEST_PUBLIC_URL: t.public.baseUrl,
      DIDYMA_TEST_DEMO_URL: demo.url,
      DIDYMA_TEST_MODEL_VERSION: version,
      DIDYMA_TEST_SLOW_DEMO_URL: slowDemoUrl,
      DIDYMA_TEST_SLOW_MODEL_VERSION: slowVersion,
      DIDYMA_TEST_ADMIN_EMAIL: admin.email,
      DIDYMA_TEST_ADMIN_PASSWORD: PASSWORD,
      DIDYMA_TEST_WORKSPACE: ws.name,
      DIDYMA_TEST_API_TOKEN: apiToken.key,
      DIDYMA_TEST_CLIENT_ID: app.client_id,
      DIDYMA_TEST_CLIENT_SECRET: app.client_secret,
    });
    expect(code, `pytest failed:\n${output}`).to.equal(0);
    expect(output).to.match(/\d+ passed/);
    expect(output).to.not.match(/skipped|xfail/);
  });
});
