import { expect } from 'chai';
import type { Brief } from './load.js';
import { clockOffsetOf, completedIn, completedInvocationOf, lagOf, measureNotifications, type CompletionProbe } from './notifications.js';
import { notificationRows } from './report.js';

const brief: Brief = { rps: 100, p50: 1, p99: 2, requests: 1000, statuses: { 201: 1000 }, errors: 0, timeouts: 0 };
const frame = (status: string, invocation: string, id?: string) =>
  `${id ? `id: ${id}\n` : ''}event: invocation\ndata: ${JSON.stringify({ id: '1', invocation_id: invocation, status, created_at: '2026-01-01T00:00:00Z' })}`;

describe('bench (8): completion → notification', () => {
  it('takes the COMPLETED events of whole frames, not comments or other statuses', () => {
    expect(completedIn(['retry: 1000', ': keep-alive', frame('QUEUED', 'a'), frame('COMPLETED', 'a', '5:5:'), frame('ERROR', 'b')])).to.deep.equal(['a']);
  });

  it('takes the invocation of an invocation.completed webhook, and of no other event or body', () => {
    const body = (type: string) => JSON.stringify({ type, timestamp: '2026-01-01T00:00:00Z', data: { invocation_id: 'a', status: 'COMPLETED' } });
    expect(completedInvocationOf(body('invocation.completed'))).to.equal('a');
    expect(completedInvocationOf(body('invocation.failed'))).to.equal(undefined);
    expect(completedInvocationOf('not json')).to.equal(undefined);
  });

  it('reads the clock offset from the shortest round trip', async () => {
    const times = [0, 10, 100, 101, 200, 206];
    const other = [1005, 1100.5, 1203];
    let t = 0;
    let o = 0;
    const offset = await clockOffsetOf(async () => other[o++]!, 3, () => times[t++]!);
    expect(offset).to.deep.equal({ offsetMs: 1000, uncertaintyMs: 0.5 });
  });

  it('sets each hearing against the completion on the database clock, and counts what was never heard', () => {
    const completed = new Map([
      ['a', 1000],
      ['b', 2000],
      ['c', 3000],
    ]);
    const heard = new Map([
      ['a', 1002],
      ['b', 2010],
    ]);
    expect(lagOf(completed, heard, 1)).to.include({ count: 2, missing: 1, p50: 3 });
  });

  it('opens the probes before the first POST and closes them after the grace', async () => {
    const steps: string[] = [];
    const heard = new Map<string, number>();
    const probe: CompletionProbe = { heard, close: async () => void steps.push('close') };
    const report = await measureNotifications(
      {
        sessions: async (n) => Array.from({ length: n }, (_, i) => `s${i}`),
        clockOffset: async () => ({ offsetMs: 0, uncertaintyMs: 0.1 }),
        openProbes: async () => (steps.push('open'), { sse: probe }),
        post: async () => {
          steps.push('post');
          heard.set('a', 1005);
          return brief;
        },
        waitFinal: async () => void steps.push('final'),
        completedAt: async () => new Map([['a', 1000]]),
      },
      { rate: 100, rateFrom: '50% of the sustained capacity', sessions: 2, durationSec: 10, graceMs: 1000 },
    );
    expect(steps).to.deep.equal(['open', 'post', 'final', 'close']);
    expect(report.lags.sse).to.deep.include({ count: 1, missing: 0, p50: 5, p99: 5 });
    const [row] = notificationRows(report);
    expect(row![0]).to.equal('8');
    expect(row![1]).to.contain('session event stream').and.contain('100/s (50% of the sustained capacity)').and.contain('2 sessions');
    expect(row![2]).to.equal('1 heard; POST 100/s');
    expect(row![3]).to.equal('5.0 / 5.0');
  });
});
