import { expect } from 'chai';
import { METRIC_CATALOG, type MetricDefinition } from '../../../features/metrics/catalog.js';
import { planMetrics } from './metric-plan.js';

describe('dashboard metrics plan: every metric charted or listed with its reason', () => {
  const names = (list: Array<{ name: string } | { metric: { name: string } }>) => list.map((m) => ('name' in m ? m.name : m.metric.name));

  it('leaves no metric of the catalog out, with or without a model', () => {
    for (const model of [undefined, { code: 'iris', version: '1' }]) {
      const plan = planMetrics(METRIC_CATALOG, model);
      expect([...names(plan.charted), ...names(plan.undrawn)]).to.have.members(METRIC_CATALOG.map((m) => m.name));
    }
  });

  it('charts the per-model metrics once a model is picked, narrowing every metric that can be narrowed', () => {
    const whole = planMetrics(METRIC_CATALOG, undefined);
    expect(whole.undrawn.find((m) => m.name === 'last_model_invocation_duration_seconds')?.reason).to.match(/choose a model above/);
    expect(whole.charted.every((c) => Object.keys(c.params).length === 0 && !c.wholeWorkspace)).to.equal(true);

    const iris = planMetrics(METRIC_CATALOG, { code: 'iris', version: '1' });
    const byName = Object.fromEntries(iris.charted.map((c) => [c.metric.name, c]));
    for (const name of ['last_model_invocation_duration_seconds', 'invocation_duration_seconds', 'queue_wait_seconds', 'invocations_per_second', 'failed_invocations_per_second', 'queued_invocations', 'in_flight_invocations', 'active_sessions']) {
      expect(byName[name]?.params, name).to.deep.equal({ model_code: 'iris', model_version: '1' });
      expect(byName[name]?.wholeWorkspace, name).to.equal(false);
    }
    expect(byName.total_deployments).to.deep.include({ params: {}, wholeWorkspace: true });
  });

  it('charts rates, not running totals, and says so for the total', () => {
    const plan = planMetrics(METRIC_CATALOG, undefined);
    expect(names(plan.charted)).to.include('invocations_per_second').and.not.include('total_invocations');
    expect(plan.undrawn.find((m) => m.name === 'total_invocations')?.reason).to.match(/running total.*invocations per second/);
  });

  it('lists a metric that needs a parameter the page cannot choose, naming it', () => {
    const odd: MetricDefinition = { name: 'by_user', description: 'd', metrics_query: 'x{__PARAMS__}', required_params: ['model_code', 'user_id'], optional_params: [] };
    const plan = planMetrics([odd], { code: 'iris', version: '1' });
    expect(plan.charted).to.deep.equal([]);
    expect(plan.undrawn[0]!.reason).to.match(/needs user_id/).and.include('GET /api/metric/by_user');
  });
});
