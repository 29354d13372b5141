import { expect } from 'chai';
import { InputError } from '../../kernel/errors/errors.js';
import { metricByName } from './catalog.js';
import { MAX_POINTS, parseMetricRequest } from './params.js';

const metric = (name: string) => metricByName(name)!;
const fails = (name: string, query: Record<string, unknown>, message: RegExp) => {
  expect(() => parseMetricRequest(metric(name), query), JSON.stringify(query)).to.throw(InputError, message);
};

describe('metric query parameters', () => {
  it('turns catalog parameters into labels in catalog order and keeps workspace apart', () => {
    const request = parseMetricRequest(metric('active_sessions'), { user_id: '7', workspace: 'ws', model_code: 'iris' });
    expect(request.labels).to.deep.equal([['model_code', 'iris'], ['user_id', '7']]);
    expect(request.workspace).to.equal('ws');
    expect(request.range).to.equal(undefined);
  });

  it('accepts workspace on every metric, even those whose catalog entry does not list it', () => {
    expect(parseMetricRequest(metric('total_invocations'), { workspace: 'ws' }).workspace).to.equal('ws');
  });

  it('refuses a parameter the metric does not know, naming the ones it accepts', () => {
    fails('total_invocations', { user_id: '1' }, /Unknown parameter user_id.*model_code, model_version, status, type, workspace, start, end, step/);
    fails('active_sessions', { __name__: 'x' }, /Unknown parameter __name__/);
  });

  it('needs the required parameters', () => {
    fails('last_model_invocation_duration_seconds', { model_code: 'iris' }, /needs model_version/);
    const ok = parseMetricRequest(metric('last_model_invocation_duration_seconds'), { model_code: 'iris', model_version: '1', success: 'true' });
    expect(ok.labels).to.deep.equal([['model_code', 'iris'], ['model_version', '1'], ['success', 'true']]);
  });

  it('refuses repeated and empty values', () => {
    fails('active_sessions', { model_code: ['a', 'b'] }, /once/);
    fails('active_sessions', { model_code: '' }, /empty/);
  });

  it('keeps hostile values as they are: escaping is the query builder\'s job', () => {
    const request = parseMetricRequest(metric('active_sessions'), { model_code: '"} or vector(1) #' });
    expect(request.labels).to.deep.equal([['model_code', '"} or vector(1) #']]);
  });

  it('makes a range of start, end and step together', () => {
    const request = parseMetricRequest(metric('total_models'), { start: '2024-03-01T00:00:00', end: '1709251200', step: '1m' });
    expect(request.range).to.deep.equal({ start: 1709251200, end: 1709251200, step: 60 });
    expect(parseMetricRequest(metric('total_models'), { start: '1000', end: '2000', step: '10' }).range).to.deep.equal({ start: 1000, end: 2000, step: 10 });
  });

  it('refuses one or two of start, end and step', () => {
    fails('total_models', { start: '1000' }, /needs all of start, end and step; end and step missing/);
    fails('total_models', { start: '1000', end: '2000' }, /step missing/);
    fails('total_models', { step: '1m' }, /start and end missing/);
  });

  it('refuses bad times, bad steps and a range that ends before it starts', () => {
    fails('total_models', { start: 'yesterday', end: '2000', step: '1m' }, /start must be a UNIX timestamp or YYYY-MM-DDTHH:MM:SS/);
    fails('total_models', { start: '1000', end: '2024-02-30T00:00:00', step: '1m' }, /end must be/);
    fails('total_models', { start: '1000', end: '2000', step: 'soon' }, /step must be a positive duration/);
    fails('total_models', { start: '1000', end: '2000', step: '0s' }, /step must be a positive duration/);
    fails('total_models', { start: '2000', end: '1000', step: '1m' }, /end must not be before start/);
  });

  it(`refuses more than ${MAX_POINTS} points per series`, () => {
    expect(parseMetricRequest(metric('total_models'), { start: '0', end: String(MAX_POINTS - 1), step: '1s' }).range?.step).to.equal(1);
    fails('total_models', { start: '0', end: String(MAX_POINTS), step: '1s' }, /11001 points.*at most 11000/);
  });
});
