import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from '../support/http.js';
import { ManagedProcess } from '../support/model-servers.js';
import { requireEnv, stopOwnInstance } from '../support/services.js';
import { DashboardClient } from '../support/dashboard-client.js';
import { IRIS, modelPayload } from '../support/fixtures.js';
import { Browsers, screenshot, signIn } from '../support/browser.js';

const PASSWORD = 'Make-Run-Pass-42';
/** Apart from the tests' Prometheus (59090) and make run's default (59091). */
const PROMETHEUS_PORT = 59092;
const MODEL = { model_code: 'iris-classifier', model_version: '1' };

type Reply = Awaited<ReturnType<Client['get']>>;

/**
 * `make run`'s recipe end to end (scripts/run.sh): a Prometheus of its own,
 * started and pointed at `didyma dev`, so that after a few predictions the
 * metric endpoints and the dashboard answer latency and throughput per model,
 * with nothing set up by hand.
 */
describe('make run: metrics without setup', function () {
  this.timeout(240_000);
  let runDir: string;
  let dataDir: string;
  let run: ManagedProcess;
  let auth: Client;
  let priv: Client;
  let pub: Client;
  let demoUrl: string;
  let executorPort: number;
  let token: string;

  const targetsFile = () => path.join(runDir, 'prometheus', 'targets.d', 'didyma-dev.json');

  before(async () => {
    // The tests' services have installed Prometheus; this run starts one more from the same package.
    requireEnv('TEST_PROMETHEUS_URL', 'prometheus');
    runDir = fs.mkdtempSync(path.join(os.tmpdir(), 'didyma-run-'));
    // Five consecutive ports below Linux's range for outgoing connections; taken ones: other ports.
    for (let attempt = 1; ; attempt++) {
      const port = 20000 + Math.floor(Math.random() * 12000);
      dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'didyma-run-data-'));
      run = startRun(port);
      const started = await Promise.race([run.exited.then(() => false), waitFor(() => run.standardOutput.includes('didyma is running'), 180_000)]);
      if (started) {
        [auth, priv, pub] = [0, 1, 2].map((offset) => new Client(`http://127.0.0.1:${port + offset}`)) as [Client, Client, Client];
        demoUrl = `http://127.0.0.1:${port + 3}`;
        executorPort = port + 4;
        return;
      }
      if (!run.tail().includes('EADDRINUSE') || attempt === 3) throw new Error(`scripts/run.sh did not start didyma dev:\n${run.tail()}`);
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });

  after(async () => {
    await run?.stop();
    // Its own Prometheus, not the tests' shared one.
    if (runDir) stopOwnInstance('prometheus', runDir, { DIDYMA_PROMETHEUS_PORT: String(PROMETHEUS_PORT) });
    for (const dir of [runDir, dataDir]) if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  function startRun(port: number): ManagedProcess {
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      DIDYMA_RUN_DIR: runDir,
      DIDYMA_RUN_PROMETHEUS_PORT: String(PROMETHEUS_PORT),
      DIDYMA_RUN_CLI: `${process.execPath} --import tsx cli/entry.ts`,
      DIDYMA_DATA_DIR: dataDir,
      DIDYMA_AUTH_PORT: String(port),
      DIDYMA_PRIVATE_PORT: String(port + 1),
      DIDYMA_PUBLIC_PORT: String(port + 2),
      DIDYMA_DEMO_MODEL_SERVER_PORT: String(port + 3),
      DIDYMA_EXECUTOR_PORT: String(port + 4),
      DIDYMA_ADMIN_PASSWORD: PASSWORD,
      DIDYMA_LOG_LEVEL: 'warn',
    };
    return new ManagedProcess('make run', 'bash', ['scripts/run.sh'], { cwd: process.cwd(), env });
  }

  async function waitFor(done: () => boolean | Promise<boolean>, timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (await done()) return true;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    return false;
  }

  async function eventually(what: string, read: () => Promise<Reply>, done: (reply: Reply) => boolean): Promise<Reply> {
    let last: Reply | undefined;
    const ok = await waitFor(async () => done((last = await read())), 60_000);
    if (!ok) throw new Error(`timed out waiting for ${what}; last answer: ${last?.status} ${last?.text}`);
    return last!;
  }

  const metric = (name: string) => priv.get(`/api/metric/${name}?${new URLSearchParams(MODEL).toString()}`, { token });
  const values = (reply: Reply): number[] => ((reply.body as any).data?.result ?? []).map((r: any) => Number(r.value[1]));

  /** The walkthrough's steps up to a model, as a new user does them. */
  async function registerIris(): Promise<void> {
    expect((await priv.post('/api/storage', { token, json: { storage_key: 'cards', storage_class: 'didyma.storage.FilesystemStorage', connector_init: { path: 'cards' } } })).status).to.equal(201);
    const ticket = await priv.post('/api/storage/cards/files/request_upload', { token, json: { file_name: 'iris.md', content_type: 'text/markdown' } });
    const form = new FormData();
    form.append('file', new Blob(['# Iris'], { type: 'text/markdown' }), 'iris.md');
    const card = (await priv.post(`/api/storage/cards/files/proxy_upload/${ticket.body.upload_id}`, { token, multipart: form })).body.file_id;
    const init = { model_registry_url: demoUrl, tracking_server_url: demoUrl };
    const deployment = await priv.post('/api/deployment', {
      token,
      json: { deployment_key: 'demo', registry_connector_class: 'didyma.registry.OpenInferenceRegistryConnector', registry_connector_init: init, server_proxy_class: 'didyma.proxy.OpenInferenceServerProxy', server_proxy_init: { server_proxy_url: demoUrl } },
    });
    expect(deployment.status, deployment.text).to.equal(201);
    const model = await priv.post('/api/platform_model', { token, json: modelPayload(MODEL.model_code, MODEL.model_version, card) });
    expect(model.status, model.text).to.equal(201);
  }

  it('starts a Prometheus that scrapes the dev servers, and points didyma dev at it', () => {
    expect(run.tail(80)).to.include(`[run] metrics: Prometheus on http://127.0.0.1:${PROMETHEUS_PORT} scrapes`);
    const targets = JSON.parse(fs.readFileSync(targetsFile(), 'utf8'));
    expect(targets[0].targets).to.deep.equal([new URL(priv.baseUrl).host, `127.0.0.1:${executorPort}`]);
  });

  it("answers one prediction's latency and the throughput of its model through the API and the dashboard", async () => {
    token = (await auth.post('/api/auth/token/obtain', { json: { email: 'admin@didyma.local', password: PASSWORD, workspace: 'default' } })).body.access;
    await registerIris();
    const m = `/api/model/${MODEL.model_code}/version/${MODEL.model_version}`;
    const session = (await pub.post(`${m}/session`, { token })).body.id;
    const invocation = await pub.post(`${m}/session/${session}/invocation`, { token, json: { type: 'PREDICT', request: { type: 'FEATURES', body: IRIS } } });
    expect(invocation.status, invocation.text).to.equal(201);

    // One run: the new series are read at zero first, so the rate and the quantiles count it.
    const throughput = await eventually('a throughput for iris', () => metric('invocations_per_second'), (reply) => reply.status === 200 && values(reply)[0]! > 0);
    expect((throughput.body as any).data.result[0].metric).to.deep.equal({ workspace: 'default' });
    for (const name of ['invocation_duration_seconds', 'queue_wait_seconds']) {
      const quantiles = await eventually(`the quantiles of ${name}`, () => metric(name), (reply) => reply.status === 200 && values(reply).filter(Number.isFinite).length === 3);
      expect(values(quantiles).every((v) => v >= 0), name).to.equal(true);
    }
    expect(values(await metric('failed_invocations_per_second'))).to.deep.equal([0]);

    const dashboard = new DashboardClient(auth.baseUrl);
    await dashboard.signIn('admin@didyma.local', PASSWORD, 'default');
    const path = `/dashboard/metrics?model=${MODEL.model_code}:${MODEL.model_version}&range=5m`;
    const panelOf = (text: string, name: string) => text.slice(text.indexOf(`id="metric-${name}"`), text.indexOf('</section>', text.indexOf(`id="metric-${name}"`)));
    const charted = ['invocation_duration_seconds', 'invocations_per_second', 'last_model_invocation_duration_seconds'];
    let text = '';
    const drawn = await waitFor(async () => {
      const page = await dashboard.get(path);
      text = page.text;
      return page.status === 200 && charted.every((name) => /<(polyline|circle) class="series/.test(panelOf(text, name)));
    }, 30_000);
    expect(drawn, `the charts of ${charted.join(', ')} on ${path}:\n${charted.map((name) => panelOf(text, name)).join('\n')}`).to.equal(true);
    expect(text).to.not.contain('PROMETHEUS_URL');
  });

  it('draws the picked model in a browser, from real figures (docs/screenshots/metrics.png)', async () => {
    const m = `/api/model/${MODEL.model_code}/version/${MODEL.model_version}`;
    const session = (await pub.post(`${m}/session`, { token })).body.id;
    // A few predictions a second apart, so the lines have a shape.
    for (let i = 0; i < 8; i++) {
      const created = await pub.post(`${m}/session/${session}/invocation`, { token, json: { type: 'PREDICT', request: { type: 'FEATURES', body: IRIS } } });
      expect(created.status, created.text).to.equal(201);
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
    const browsers = new Browsers();
    try {
      const { page } = await browsers.launch();
      await signIn(page, `${auth.baseUrl}/dashboard`, { id: 0, email: 'admin@didyma.local', password: PASSWORD }, 'default');
      await page.goto(`${auth.baseUrl}/dashboard/metrics`);
      await page.getByLabel('Model', { exact: true }).selectOption(`${MODEL.model_code}:${MODEL.model_version}`);
      await page.getByLabel('Time range', { exact: true }).selectOption('5m');
      await page.getByRole('button', { name: 'Show' }).click();
      await page.waitForURL(/range=5m/);
      expect(await page.locator('figure.chart svg[role="img"]').count()).to.be.greaterThan(8);
      expect(await page.locator('#undrawn-total_invocations').textContent()).to.contain('invocations per second');
      await screenshot(page, 'metrics');
    } finally {
      await browsers.closeAll();
    }
  });

  it('takes its scrape targets away when didyma dev stops', async () => {
    await run.stop();
    expect(fs.existsSync(targetsFile())).to.equal(false);
  });
});
