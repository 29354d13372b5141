import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from '../support/http.js';

const PASSWORD = 'Walkthrough-Pass-42';
const IRIS = JSON.stringify({ sepal_length: 5.1, sepal_width: 3.5, petal_length: 1.4, petal_width: 0.2 });

/** The model payload of the README walkthrough's step 3, with the model card the test uploaded. */
function readmeModel(card: string): Record<string, unknown> {
  const readme = fs.readFileSync('README.md', 'utf8');
  const shell = /curl -s \$P\/api\/platform_model .* -d '(\{[\s\S]*?\})'\n/.exec(readme)?.[1];
  if (!shell) throw new Error('README.md has lost its step 3 (curl … $P/api/platform_model … -d \'{…}\')');
  return JSON.parse(shell.replaceAll(`'$CARD'`, card)) as Record<string, unknown>;
}

/** The README walkthrough, step by step, against a real `didyma dev` process on embedded defaults. */
describe('README walkthrough against `didyma dev`', function () {
  this.timeout(120_000);
  let child: ChildProcess;
  let dataDir: string;
  let output = '';
  let auth: Client;
  let priv: Client;
  let pub: Client;
  let demoUrl: string;

  before(async () => {
    // Five consecutive ports, below Linux's range for outgoing connections (32768 up) so that no
    // client of another test takes one meanwhile; a port still taken by another program: new ports.
    for (let attempt = 1; ; attempt++) {
      const port = 20000 + Math.floor(Math.random() * 12000);
      await startDev(port);
      if (output.includes('didyma is running')) {
        [auth, priv, pub] = [0, 1, 2].map((offset) => new Client(`http://127.0.0.1:${port + offset}`)) as [Client, Client, Client];
        demoUrl = `http://127.0.0.1:${port + 3}`;
        return;
      }
      if (!output.includes('EADDRINUSE') || attempt === 3) throw new Error(`didyma dev did not start:\n${output}`);
      await stopDev();
    }
  });
  after(stopDev);

  async function startDev(port: number): Promise<void> {
    output = '';
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'didyma-walkthrough-'));
    child = spawn(process.execPath, ['--import', 'tsx', 'cli/entry.ts', 'dev'], {
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        DIDYMA_DATA_DIR: dataDir,
        DIDYMA_AUTH_PORT: String(port),
        DIDYMA_PRIVATE_PORT: String(port + 1),
        DIDYMA_PUBLIC_PORT: String(port + 2),
        DIDYMA_DEMO_MODEL_SERVER_PORT: String(port + 3),
        DIDYMA_EXECUTOR_PORT: String(port + 4),
        DIDYMA_ADMIN_PASSWORD: PASSWORD,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout!.on('data', (chunk) => (output += chunk));
    child.stderr!.on('data', (chunk) => (output += chunk));
    for (let i = 0; i < 600 && child.exitCode === null && !output.includes('didyma is running') && !output.includes('EADDRINUSE'); i++) await new Promise((r) => setTimeout(r, 100));
  }

  async function stopDev(): Promise<void> {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      await new Promise((resolve) => child.once('exit', resolve));
    }
    fs.rmSync(dataDir, { recursive: true, force: true });
  }

  it('prints how to log in, then runs login → storage → card → deployment → model → session → predict+explain → feedback', async () => {
    expect(output).to.include('admin@didyma.local');
    const login = await auth.post('/api/auth/token/obtain', { json: { email: 'admin@didyma.local', password: PASSWORD, workspace: 'default' } });
    expect(login.status).to.equal(200);
    const token = login.body.access as string;

    expect((await priv.post('/api/storage', { token, json: { storage_key: 'cards', storage_class: 'didyma.storage.FilesystemStorage', connector_init: { path: 'cards' } } })).status).to.equal(201);
    const ticket = await priv.post('/api/storage/cards/files/request_upload', { token, json: { file_name: 'iris.md', content_type: 'text/markdown' } });
    expect(ticket.body.upload_url).to.equal(`${priv.baseUrl}/api/storage/cards/files/proxy_upload/${ticket.body.upload_id}`);
    const form = new FormData();
    form.append('file', new Blob(['# Iris'], { type: 'text/markdown' }), 'iris.md');
    const card = (await priv.post(`/api/storage/cards/files/proxy_upload/${ticket.body.upload_id}`, { token, multipart: form })).body.file_id;

    const deployment = await priv.post('/api/deployment', {
      token,
      json: {
        deployment_key: 'demo',
        registry_connector_class: 'didyma.registry.OpenInferenceRegistryConnector',
        registry_connector_init: { model_registry_url: demoUrl, tracking_server_url: demoUrl },
        server_proxy_class: 'didyma.proxy.OpenInferenceServerProxy',
        server_proxy_init: { server_proxy_url: demoUrl },
      },
    });
    expect(deployment.status, deployment.text).to.equal(201);

    const model = await priv.post('/api/platform_model', { token, json: readmeModel(card) });
    expect(model.status, model.text).to.equal(201);

    const m = '/api/model/iris-classifier/version/1';
    const session = (await pub.post(`${m}/session`, { token })).body.id;
    const invocation = await pub.post(`${m}/session/${session}/invocation`, { token, json: { type: 'PREDICT', request: { type: 'FEATURES', body: IRIS }, with_explanation: true } });
    expect(invocation.status).to.equal(201);
    let items: any[] = [];
    for (let i = 0; i < 200; i++) {
      items = (await pub.get(`${m}/session/${session}/invocation`, { token })).body;
      if (items.length === 2 && items.every((x) => x.status === 'COMPLETED')) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(items.map((x) => [x.type, x.status])).to.deep.equal([
      ['EXPLAIN', 'COMPLETED'],
      ['PREDICT', 'COMPLETED'],
    ]);
    const feedback = await pub.post(`${m}/session/${session}/invocation/${invocation.body.id}/feedback`, { token, json: { request: { body: JSON.stringify({ correct: true }) } } });
    expect(feedback.status).to.equal(201);
    expect(feedback.body.status).to.equal('COMPLETED');

    const virginica = JSON.stringify({ sepal_length: 6.7, sepal_width: 3.0, petal_length: 5.2, petal_width: 2.3 });
    const oneCall = await pub.post(`${m}/session/${session}/invocation`, { token, headers: { prefer: 'wait=10' }, json: { type: 'PREDICT', request: { type: 'FEATURES', body: virginica } } });
    expect(oneCall.status, oneCall.text).to.equal(200);
    expect(oneCall.body.status).to.equal('COMPLETED');
    expect(oneCall.headers.get('preference-applied')).to.equal('wait=10');

    const typo = JSON.stringify({ sepal_lenght: 5.1, sepal_width: 3.5, petal_length: 1.4, petal_width: 0.2 });
    const refused = await pub.post(`${m}/session/${session}/invocation`, { token, json: { type: 'PREDICT', request: { type: 'FEATURES', body: typo } } });
    expect(refused.status, 'the README schema requires every feature').to.equal(400);
    expect(refused.body.message).to.include("must have required property 'sepal_length'");
  });

  it('names the password in its login example, and keeps request lines out of the terminal', () => {
    expect(output).to.include(`"password":"'"$DIDYMA_ADMIN_PASSWORD"'"`);
    expect(output, 'requests were made by the walkthrough').to.not.include('request completed');
    const welcome = output.indexOf('didyma is running');
    expect(output.indexOf('"msg":"listening"'), 'start-up lines come before the welcome').to.be.within(0, welcome);
  });
});
