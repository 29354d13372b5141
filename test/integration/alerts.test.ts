import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { metricNames } from '../../features/metrics/names.js';
import { createOperatorMetrics } from '../../operator/metrics.js';
import { renderAlerts, renderPrometheusRules, rulesFile, rulesOf, runTool as tool, type PrometheusRule } from '../support/chart-alerts.js';
import { requireEnv } from '../support/services.js';

// The chart's PrometheusRule, rendered as `helm template` does, checked and
// unit-tested by promtool (Debian's, from the prometheus service) against the
// series of test/fixtures/alerts, which expect release "dy" in namespace "didyma".

const UNIT_TESTS = 'test/fixtures/alerts/didyma-rules.test.yaml';
const render = (...sets: string[]) => renderPrometheusRules('didyma', ...sets);
const renderRule = (...sets: string[]) => renderAlerts('didyma', ...sets);

describe("alerts: the chart's PrometheusRule, checked by promtool", function () {
  this.timeout(60_000);
  let promtool: string;
  let dir: string;

  before(() => {
    promtool = requireEnv('TEST_PROMTOOL', 'prometheus');
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'didyma-alerts-'));
  });

  after(() => {
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  /** Writes a PrometheusRule's groups as a rules file beside the unit tests, as their rule_files name it. */
  const writeRules = (rule: PrometheusRule) => {
    fs.writeFileSync(path.join(dir, 'rules.yaml'), rulesFile(rule.spec.groups));
    fs.copyFileSync(UNIT_TESTS, path.join(dir, path.basename(UNIT_TESTS)));
  };

  it('renders no PrometheusRule unless alerts.enabled, and one labelled for the ruleSelector when on', async () => {
    expect(await render()).to.deep.equal([]);
    const rule = await renderRule('alerts.labels.release=kube-prometheus-stack');
    expect(rule.metadata).to.include({ name: 'dy-didyma', namespace: 'didyma' });
    expect(rule.metadata.labels).to.include({ release: 'kube-prometheus-stack', 'app.kubernetes.io/instance': 'dy' });
  });

  it('passes promtool check rules, every alert with a severity, a summary, a description and a runbook section of docs/metrics.md', async () => {
    const rule = await renderRule();
    writeRules(rule);
    expect(await tool(promtool, ['check', 'rules', path.join(dir, 'rules.yaml')])).to.match(/SUCCESS: 11 rules found/);
    const metricsDoc = fs.readFileSync('docs/metrics.md', 'utf8');
    for (const { alert, labels, annotations } of rulesOf(rule)) {
      expect(labels.severity, alert).to.be.oneOf(['warning', 'critical']);
      expect(Object.keys(annotations).sort(), alert).to.deep.equal(['description', 'runbook', 'summary']);
      expect(annotations.runbook, alert).to.equal(`docs/metrics.md#${alert.toLowerCase()}`);
      expect(metricsDoc, `docs/metrics.md has a section ### ${alert}`).to.match(new RegExp(`^### ${alert}$`, 'm'));
    }
  });

  it('fires each alert when it should and stays silent when it should not (promtool test rules)', async () => {
    writeRules(await renderRule());
    expect(await tool(promtool, ['test', 'rules', path.join(dir, path.basename(UNIT_TESTS))])).to.match(/SUCCESS/);
  });

  it('keeps to the release namespace and to metrics the platform exports (and Prometheus’s own up)', async () => {
    const exported = new Set<string>([...Object.values(metricNames), ...createOperatorMetrics().registry.getMetricsAsArray().map((metric) => metric.name)]);
    for (const { alert, expr } of rulesOf(await renderRule())) {
      const selectors = [...expr.matchAll(/\b([a-z_]+)\{([^}]*)\}/g)];
      expect(selectors.length, alert).to.be.greaterThan(0);
      for (const [, name, matchers] of selectors) {
        expect(matchers, `${alert}: ${name}`).to.match(/^namespace="didyma"/);
        if (name !== 'up') expect(exported, `${alert}: ${name}`).to.include(name!.replace(/_(bucket|count|sum)$/, ''));
      }
    }
  });

  it('takes each threshold, duration and severity from its values, and refuses values out of range', async () => {
    const rule = await renderRule('alerts.invocationsFailing.ratio=0.25', 'alerts.invocationsFailing.for=1m', 'alerts.queueWaitTooLong.seconds=300', 'alerts.operatorLeaderMissing.severity=page', 'alerts.databasePoolSaturated.waiting=3', 'alerts.invocationLeasesExpiring.count=20');
    const named = (alert: string) => rulesOf(rule).find((r) => r.alert === alert)!;
    expect(named('DidymaInvocationsFailing').expr).to.match(/ > 0\.25$/);
    expect(named('DidymaInvocationsFailing').for).to.equal('1m');
    expect(named('DidymaQueueWaitTooLong').expr).to.match(/ > 300$/);
    expect(named('DidymaOperatorLeaderMissing').labels.severity).to.equal('page');
    expect(named('DidymaDatabasePoolSaturated').expr).to.match(/pending_acquires\{[^}]*\}\) > 3 and /);
    expect(named('DidymaInvocationLeasesExpiring').expr).to.match(/\[15m\]\)\) > 20$/);
    for (const wrong of ['alerts.invocationsFailing.ratio=2', 'alerts.webhookDeliveriesFailing.for=soon', 'alerts.queueWaitTooLong.threshold=60', 'alerts.databasePoolSaturated.waiting=-1', 'alerts.invocationLeasesExpiring.count=-1']) {
      const refused = await render('alerts.enabled=true', wrong).then(() => 'rendered', (error: Error) => error.message);
      expect(refused, wrong).to.match(/values don't meet the specifications of the schema/);
    }
  });
});
