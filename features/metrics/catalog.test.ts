import { expect } from 'chai';
import { FILTER_LABELS, METRIC_CATALOG } from './catalog.js';
import { PARAMS_PLACEHOLDER } from './promql.js';

describe('metric catalog', () => {
  it('has the thirteen metrics of the API with their parameters', () => {
    const table = Object.fromEntries(METRIC_CATALOG.map((m) => [m.name, [m.required_params, m.optional_params]]));
    expect(table).to.deep.equal({
      active_sessions: [[], ['model_code', 'model_version', 'user_id', 'workspace']],
      closed_sessions: [[], ['model_code', 'model_version', 'user_id', 'workspace']],
      total_invocations: [[], ['model_code', 'model_version', 'status', 'type']],
      total_deployments: [[], ['workspace', 'proxy_class', 'connector_class']],
      total_models: [[], ['workspace', 'model_code', 'model_version']],
      invocation_failure_rate: [[], ['model_code', 'model_version']],
      queued_invocations: [[], ['model_code', 'model_version']],
      in_flight_invocations: [[], ['model_code', 'model_version']],
      queue_wait_seconds: [[], ['model_code', 'model_version']],
      invocation_duration_seconds: [[], ['model_code', 'model_version', 'type', 'success']],
      invocations_per_second: [[], ['model_code', 'model_version', 'status', 'type']],
      failed_invocations_per_second: [[], ['model_code', 'model_version', 'type']],
      last_model_invocation_duration_seconds: [['model_code', 'model_version'], ['success']],
    });
  });

  it('puts the placeholder inside the braces of every selector of every template', () => {
    for (const metric of METRIC_CATALOG) {
      const selectors = metric.metrics_query.match(/didyma_[a-z_]+\{[^}]*\}/g) ?? [];
      expect(selectors.length, metric.name).to.be.greaterThan(0);
      for (const selector of selectors) expect(selector, metric.name).to.include(PARAMS_PLACEHOLDER);
      expect(metric.metrics_query.split(PARAMS_PLACEHOLDER).length - 1, metric.name).to.equal(selectors.length);
    }
  });

  it('takes p50, p95 and p99 of both latencies, and rates over a window, never a running total', () => {
    const byName = Object.fromEntries(METRIC_CATALOG.map((m) => [m.name, m.metrics_query]));
    for (const name of ['queue_wait_seconds', 'invocation_duration_seconds']) {
      expect(byName[name]!.match(/histogram_quantile\((0\.\d+),/g), name).to.deep.equal(['histogram_quantile(0.5,', 'histogram_quantile(0.95,', 'histogram_quantile(0.99,']);
    }
    expect(byName.invocation_duration_seconds).to.include('didyma_invocation_duration_seconds_bucket{');
    for (const name of ['invocations_per_second', 'failed_invocations_per_second']) expect(byName[name]).to.match(/^sum by \(workspace\) \(rate\(didyma_invocations_total\{/);
  });

  it('filters only on labels the instruments carry', () => {
    expect(FILTER_LABELS).to.have.members(['model_code', 'model_version', 'user_id', 'workspace', 'status', 'type', 'proxy_class', 'connector_class', 'success']);
  });
});
