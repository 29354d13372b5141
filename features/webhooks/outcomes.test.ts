import { expect } from 'chai';
import { routeOutcome } from './outcomes.js';

describe('webhook deliveries of an invocation’s outcome: routed and built in one place', () => {
  const finished = new Date('2026-12-06T10:00:01.234Z');
  const outcome = (changes: Partial<Parameters<typeof routeOutcome>[0]> = {}): Parameters<typeof routeOutcome>[0] => ({
    workspace: 'acme',
    workspace_id: 7,
    invocation_id: 'inv-1',
    session_id: 'ses-1',
    model_code: 'iris',
    model_version: 'v1',
    type: 'PREDICT',
    order: 3,
    status: 'COMPLETED',
    error: null,
    created_at: new Date('2026-12-06T10:00:00.000Z'),
    completed_at: finished,
    callback_endpoint_id: null,
    callback_url: null,
    endpoints: [
      { id: 1, url: 'https://hooks.example.test/a', events: ['invocation.completed'] },
      { id: 2, url: 'https://hooks.example.test/b', events: ['invocation.failed'] },
    ],
    ...changes,
  });

  it('goes to each endpoint that asked for its event, with the body every attempt sends', () => {
    const deliveries = routeOutcome(outcome());
    expect(deliveries.map((delivery) => delivery.endpoint_id)).to.deep.equal([1]);
    expect(deliveries[0]).to.include({ workspace_id: 7, url: null, event_type: 'invocation.completed' });
    expect(JSON.parse(deliveries[0]!.payload)).to.deep.equal({
      type: 'invocation.completed',
      timestamp: '2026-12-06T10:00:01.234Z',
      data: {
        workspace: 'acme',
        invocation_id: 'inv-1',
        session_id: 'ses-1',
        model_code: 'iris',
        model_version: 'v1',
        type: 'PREDICT',
        order: 3,
        status: 'COMPLETED',
        error: null,
        created_at: '2026-12-06T10:00:00.000Z',
        completed_at: '2026-12-06T10:00:01.234Z',
      },
    });
  });

  it('names ERROR invocation.failed and CANCELLED invocation.cancelled', () => {
    expect(routeOutcome(outcome({ status: 'ERROR', error: 'boom' })).map((delivery) => [delivery.endpoint_id, delivery.event_type])).to.deep.equal([[2, 'invocation.failed']]);
    expect(routeOutcome(outcome({ status: 'CANCELLED' }))).to.deep.equal([]);
  });

  it('adds the callback, signed by the endpoint that allows it, once when it is that endpoint’s own URL', () => {
    const other = routeOutcome(outcome({ callback_endpoint_id: 1, callback_url: 'https://hooks.example.test/a/run-9' }));
    expect(other.map((delivery) => [delivery.endpoint_id, delivery.url])).to.deep.equal([
      [1, null],
      [1, 'https://hooks.example.test/a/run-9'],
    ]);
    const same = routeOutcome(outcome({ callback_endpoint_id: 1, callback_url: 'https://hooks.example.test/a' }));
    expect(same.map((delivery) => [delivery.endpoint_id, delivery.url])).to.deep.equal([[1, null]]);
    const unsubscribed = routeOutcome(outcome({ status: 'CANCELLED', callback_endpoint_id: 2, callback_url: 'https://hooks.example.test/b/x' }));
    expect(unsubscribed.map((delivery) => [delivery.endpoint_id, delivery.url, delivery.event_type])).to.deep.equal([[2, 'https://hooks.example.test/b/x', 'invocation.cancelled']]);
  });

  it('sends nothing to a callback whose endpoint is disabled or gone', () => {
    expect(routeOutcome(outcome({ status: 'CANCELLED', callback_endpoint_id: 9, callback_url: 'https://elsewhere.test/' }))).to.deep.equal([]);
  });
});
