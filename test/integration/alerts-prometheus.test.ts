import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { startExecutor } from '../../executor/start.js';
import type { DemoModelServer } from '../../demo/model-server/server.js';
import { renderAlerts, rulesFile } from '../support/chart-alerts.js';
import { demoDeployment, filesystemStorage, IRIS, modelPayload, startDemoModelServer, tenant, upload, type Tenant } from '../support/fixtures.js';
import { waitFor } from '../support/kube.js';
import { startTestPlatform, unique, type TestPlatform } from '../support/platform.js';
import { requireEnv } from '../support/services.js';

// The chart's DidymaInvocationsFailing rule, rendered for a namespace of this
// run with a short `for`, loaded into the test Prometheus (scripts/services/
// prometheus.sh reads rules.d on reload), which scrapes this process's
// executor labelled with that namespace as a ServiceMonitor would: a model
// that answers 500 makes the alert fire.

interface FiringAlert {
  labels: Record<string, string>;
  annotations: Record<string, string>;
  state: string;
}

describe('alerts: one of the chart fires in the test Prometheus', function () {
  this.timeout(120_000);
  const namespace = `alerts-${process.pid}-${Date.now().toString(36)}`;
  let prometheusUrl: string;
  let rulesPath: string;
  let targetsPath: string;
  let t: TestPlatform;
  let executor: Awaited<ReturnType<typeof startExecutor>>;
  let demo: DemoModelServer | undefined;

  before(async () => {
    prometheusUrl = requireEnv('TEST_PROMETHEUS_URL', 'prometheus');
    rulesPath = path.join(requireEnv('TEST_PROMETHEUS_RULES_DIR', 'prometheus'), `${namespace}.yaml`);
    targetsPath = path.join(path.dirname(requireEnv('TEST_PROMETHEUS_TARGETS_FILE', 'prometheus')), 'targets.d', `${namespace}.json`);
    t = await startTestPlatform({ prometheusUrl });
    executor = await startExecutor(t.platform, { healthPort: 0 });
    writeAtomically(targetsPath, JSON.stringify([{ targets: [new URL(executor.healthUrl!).host], labels: { namespace } }]));
  });

  after(async () => {
    for (const file of [rulesPath, targetsPath]) if (file) fs.rmSync(file, { force: true });
    if (prometheusUrl) await reload();
    await executor?.close();
    await demo?.close();
    await t?.close();
  });

  /** Atomically, so Prometheus never reads half a file. */
  function writeAtomically(file: string, content: string): void {
    const temporary = `${file}.${process.pid}.tmp`;
    fs.writeFileSync(temporary, content);
    fs.renameSync(temporary, file);
  }

  async function reload(): Promise<void> {
    const reply = await fetch(`${prometheusUrl}/-/reload`, { method: 'POST' });
    expect(reply.status, await reply.text()).to.equal(200);
  }

  /** The rule groups Prometheus has loaded from this run's file. */
  async function loadedGroups(): Promise<string[]> {
    const body = (await (await fetch(`${prometheusUrl}/api/v1/rules`)).json()) as { data: { groups: Array<{ name: string; file: string }> } };
    return body.data.groups.filter((group) => group.file === rulesPath).map((group) => group.name);
  }

  async function alertsOfRun(): Promise<FiringAlert[]> {
    const body = (await (await fetch(`${prometheusUrl}/api/v1/alerts`)).json()) as { data: { alerts: FiringAlert[] } };
    return body.data.alerts.filter((alert) => alert.labels.namespace === namespace);
  }

  /** A supervisor's workspace whose deployment serves always-fails, the demo model that answers 500. */
  async function failingModel(): Promise<Tenant & { model: string }> {
    const version = unique('v');
    const server = await startDemoModelServer(version);
    demo = server;
    const owner = await tenant(t);
    await demoDeployment(t.private, owner.token, server.url);
    const card = await upload(t.private, owner.token, await filesystemStorage(t.private, owner.token), '# card');
    const registered = await t.private.post('/api/platform_model', { token: owner.token, json: modelPayload('always-fails', version, card.file_id) });
    expect(registered.status, registered.text).to.equal(201);
    return { ...owner, model: `/api/model/always-fails/version/${version}` };
  }

  /** Queues a prediction and waits until the executor has finished it. */
  async function predict(who: Tenant, model: string, session: string): Promise<string> {
    const reply = await t.public.post(`${model}/session/${session}/invocation`, { token: who.token, json: { type: 'PREDICT', request: { type: 'FEATURES', body: IRIS } } });
    expect(reply.status, reply.text).to.equal(201);
    const progress = `${model}/session/${session}/invocation/${reply.body.id}/check_progress`;
    return waitFor(`invocation ${reply.body.id} to finish`, async () => {
      const status = (await t.public.get(progress, { token: who.token })).body.status as string;
      return ['COMPLETED', 'ERROR'].includes(status) && status;
    });
  }

  it('fires DidymaInvocationsFailing, naming the workspace and model, once a model version fails more than its ratio', async () => {
    const rule = await renderAlerts(namespace, 'alerts.invocationsFailing.for=2s');
    const groups = rule.spec.groups
      .map((group) => ({ ...group, rules: group.rules.filter((r) => r.alert === 'DidymaInvocationsFailing') }))
      .filter((group) => group.rules.length > 0);
    writeAtomically(rulesPath, rulesFile(groups));
    await reload();
    expect(await loadedGroups()).to.deep.equal(groups.map((group) => group.name));
    expect(await alertsOfRun(), 'nothing fires before a run failed').to.deep.equal([]);

    const who = await failingModel();
    const opened = await t.public.post(`${who.model}/session`, { token: who.token });
    expect(opened.status, opened.text).to.equal(201);
    // A rate needs an increase Prometheus saw: the executor shows a new series at 0 for one scrape, so each run after the first adds one.
    const firing = await waitFor(
      'DidymaInvocationsFailing to fire in Prometheus',
      async () => {
        expect(await predict(who, who.model, opened.body.id)).to.equal('ERROR');
        return (await alertsOfRun()).find((alert) => alert.labels.alertname === 'DidymaInvocationsFailing' && alert.state === 'firing');
      },
      90_000,
      1_000,
    );
    expect(firing.labels).to.include({ namespace, workspace: who.ws.name, model_code: 'always-fails', severity: 'warning' });
    expect(firing.annotations.summary).to.equal(`Invocations of model always-fails version ${firing.labels.model_version} in workspace ${who.ws.name} are failing`);
    expect(firing.annotations.description).to.match(/^100% of the runs of always-fails/);
  });
});
