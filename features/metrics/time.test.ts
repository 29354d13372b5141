import { expect } from 'chai';
import { parseDuration, parseTime } from './time.js';

describe('metric query times', () => {
  it('reads UNIX seconds, fractions included', () => {
    expect(parseTime('1700000000')).to.equal(1_700_000_000);
    expect(parseTime('1700000000.25')).to.equal(1_700_000_000.25);
  });

  it('reads YYYY-MM-DDTHH:MM:SS as UTC, and honours a zone when one is given', () => {
    expect(parseTime('2024-03-01T12:30:15')).to.equal(Date.UTC(2024, 2, 1, 12, 30, 15) / 1000);
    expect(parseTime('2024-03-01T12:30:15Z')).to.equal(Date.UTC(2024, 2, 1, 12, 30, 15) / 1000);
    expect(parseTime('2024-03-01T12:30:15+02:00')).to.equal(Date.UTC(2024, 2, 1, 10, 30, 15) / 1000);
    expect(parseTime('2024-03-01T12:30:15.5')).to.equal(Date.UTC(2024, 2, 1, 12, 30, 15) / 1000 + 0.5);
    expect(parseTime('2024-02-29T00:00:00')).to.equal(Date.UTC(2024, 1, 29) / 1000);
  });

  it('refuses what is neither, and dates that do not exist', () => {
    for (const text of ['', 'now', '-5', '1e9', '2024-03-01', '2024-03-01 12:30:15', '2024-02-30T00:00:00', '2023-02-29T00:00:00', '2024-13-01T00:00:00', '2024-03-01T24:00:00', '2024-03-01T12:60:00', '2024-03-01T12:30:15+2', '17000000000000']) {
      expect(parseTime(text), text).to.equal(null);
    }
  });

  it('reads Prometheus durations and plain seconds for step', () => {
    const cases: Record<string, number> = { '15s': 15, '5m': 300, '1h': 3600, '1h30m': 5400, '2d': 172800, '1w': 604800, '1y': 31536000, '500ms': 0.5, '1m30s': 90, '30': 30, '0.5': 0.5 };
    for (const [text, seconds] of Object.entries(cases)) expect(parseDuration(text), text).to.equal(seconds);
  });

  it('refuses malformed durations', () => {
    for (const text of ['', 's', '5x', '1m1h', '1.5m', '-5s', '5 s', 'PT5S', '5S', 'ms']) expect(parseDuration(text), text).to.equal(null);
  });
});
