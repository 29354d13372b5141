import { expect } from 'chai';
import { durationText, latencyOf } from './latency.js';

describe('dashboard invocation latency', () => {
  const created = '2026-01-01T00:00:00.000Z';

  it('measures the queue wait from creation to start and the run time from start to completion', () => {
    expect(latencyOf({ created_at: created, started_at: '2026-01-01T00:00:00.012Z', completed_at: '2026-01-01T00:00:01.262Z' })).to.deep.equal({ wait: 12, run: 1250 });
  });

  it('leaves out what has not happened: a queued invocation, one cancelled before it started, one still running', () => {
    expect(latencyOf({ created_at: created, started_at: null, completed_at: null })).to.deep.equal({ wait: undefined, run: undefined });
    expect(latencyOf({ created_at: created, started_at: null, completed_at: '2026-01-01T00:00:05.000Z' })).to.deep.equal({ wait: undefined, run: undefined });
    expect(latencyOf({ created_at: created, started_at: '2026-01-01T00:00:00.500Z', completed_at: null })).to.deep.equal({ wait: 500, run: undefined });
  });

  it('ignores times that cannot be read or run backwards', () => {
    expect(latencyOf({ created_at: 'yesterday', started_at: created, completed_at: '2025-12-31T23:59:59.000Z' })).to.deep.equal({ wait: undefined, run: undefined });
  });

  it('reads milliseconds under a second, seconds with one decimal under a minute, then minutes and hours', () => {
    expect([0, 7.4, 340, 999.4, 999.6, 1000, 2549, 59_949, 59_970, 200_000, 3_599_700, 3_900_000].map(durationText)).to.deep.equal([
      '0 ms',
      '7 ms',
      '340 ms',
      '999 ms',
      '1.0 s',
      '1.0 s',
      '2.5 s',
      '59.9 s',
      '1 min 0 s',
      '3 min 20 s',
      '1 h 0 min',
      '1 h 5 min',
    ]);
  });

  it('shows a dash, never NaN, for a duration it does not know', () => {
    expect([undefined, Number.NaN, -5].map(durationText)).to.deep.equal(['—', '—', '—']);
  });
});
