import { expect } from 'chai';
import { guardsInput, trippedGuard, type CandidateRecord } from './alias-guards.js';

const record = (completed: number, errors: number, extra: Partial<CandidateRecord> = {}): CandidateRecord => ({ completed, errors, runP99Ms: 10, feedback: new Map(), ...extra });

describe('guards of alias traffic policies', () => {
  it('judges nothing below min_invocations finished invocations', () => {
    expect(trippedGuard({ min_invocations: 10, max_error_rate: 0 }, record(0, 9))).to.equal(null);
    expect(trippedGuard({ min_invocations: 10, max_error_rate: 0 }, record(0, 10))).to.match(/^error rate 10\/10/);
  });

  it('trips the error rate on its Wilson lower bound, not on the rate itself', () => {
    // 9 of 30 is 0.3, but its lower bound is 0.167.
    expect(trippedGuard({ min_invocations: 1, max_error_rate: 0.2 }, record(21, 9))).to.equal(null);
    // 30 of 100: its lower bound is 0.219.
    expect(trippedGuard({ min_invocations: 1, max_error_rate: 0.2 }, record(70, 30))).to.match(/above max_error_rate 0\.2$/);
  });

  it('trips the run time on its p99, and a feedback mean on its t upper bound', () => {
    expect(trippedGuard({ min_invocations: 1, max_p99_run_ms: 100 }, record(5, 0, { runP99Ms: 101 }))).to.match(/^p99 run time 101 ms/);
    expect(trippedGuard({ min_invocations: 1, max_p99_run_ms: 100 }, record(5, 0, { runP99Ms: 100 }))).to.equal(null);
    const scores = (mean: number, sd: number, n: number) => new Map([['score', { booleans: 0, trues: 0, numbers: n, mean, sd }]]);
    const guards = { min_invocations: 1, feedback: [{ property: 'score', min_mean: 0.5 }] };
    // Mean 0.4, sd 0.2: over 4 values the interval reaches 0.72, over 40 it ends at 0.46.
    expect(trippedGuard(guards, record(1, 0, { feedback: scores(0.4, 0.2, 4) }))).to.equal(null);
    expect(trippedGuard(guards, record(1, 0, { feedback: scores(0.4, 0.2, 40) }))).to.match(/^feedback score mean 0\.4 of 40/);
    expect(trippedGuard(guards, record(1, 0))).to.equal(null);
  });

  it('fills min_invocations in and takes null for no guards', () => {
    expect(guardsInput(null)).to.equal(undefined);
    expect(guardsInput({ max_error_rate: 0.1 })).to.deep.equal({ min_invocations: 100, max_error_rate: 0.1 });
    expect(() => guardsInput({ feedback: [{ property: 'x', min_rate: 0.5, min_mean: 1 }] })).to.throw('guards.feedback[0]: exactly one');
  });
});
