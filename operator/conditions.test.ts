import { expect } from 'chai';
import { nextStatus, sameStatus, transitions, type ConditionUpdate } from './conditions.js';

const READY: ConditionUpdate[] = [
  { type: 'Ready', status: 'True', reason: 'Configured', message: 'ok' },
  { type: 'Reachable', status: 'True', reason: 'HealthChecksPassed', message: 'ok' },
];
const UNREACHABLE: ConditionUpdate[] = [
  { type: 'Ready', status: 'False', reason: 'Unreachable', message: 'server down' },
  { type: 'Reachable', status: 'False', reason: 'ServerUnreachable', message: 'server down' },
];

describe('status conditions', () => {
  it('stamps the generation and the transition time of new conditions', () => {
    const status = nextStatus(undefined, 3, READY, '2026-01-01T00:00:00.000Z');
    expect(status.observedGeneration).to.equal(3);
    expect(status.conditions.map((c) => [c.type, c.status, c.lastTransitionTime, c.observedGeneration])).to.deep.equal([
      ['Ready', 'True', '2026-01-01T00:00:00.000Z', 3],
      ['Reachable', 'True', '2026-01-01T00:00:00.000Z', 3],
    ]);
  });

  it('computes exactly the same status when nothing changed (reconciling twice writes nothing)', () => {
    const first = nextStatus(undefined, 1, READY, '2026-01-01T00:00:00.000Z');
    const again = nextStatus(first, 1, READY, '2026-01-01T00:05:00.000Z');
    expect(sameStatus(first, again)).to.equal(true);
    expect(transitions(first, again)).to.deep.equal([]);
  });

  it('moves the transition time only for conditions whose status changed', () => {
    const first = nextStatus(undefined, 1, READY, '2026-01-01T00:00:00.000Z');
    const down = nextStatus(first, 1, UNREACHABLE, '2026-01-01T00:05:00.000Z');
    expect(down.conditions.every((c) => c.lastTransitionTime === '2026-01-01T00:05:00.000Z')).to.equal(true);
    expect(transitions(first, down).map((c) => `${c.type}=${c.status}/${c.reason}`)).to.deep.equal(['Ready=False/Unreachable', 'Reachable=False/ServerUnreachable']);
    const stillDown = nextStatus(down, 1, [{ ...UNREACHABLE[0]!, message: 'still down' }, UNREACHABLE[1]!], '2026-01-01T00:10:00.000Z');
    expect(stillDown.conditions[0]!.lastTransitionTime).to.equal('2026-01-01T00:05:00.000Z');
  });

  it('sees a new generation as a change', () => {
    const first = nextStatus(undefined, 1, READY, '2026-01-01T00:00:00.000Z');
    expect(sameStatus(first, nextStatus(first, 2, READY, '2026-01-01T00:00:00.000Z'))).to.equal(false);
  });
});
