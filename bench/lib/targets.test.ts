import { expect } from 'chai';
import type { DrainRun, MeasuredRun } from './queues.js';
import { floorsMs, latencyTargets, queueTargets, rssTargets, type QueuesReport } from './targets.js';

const served = (rps: number, server: number): MeasuredRun => ({ rps, requests: rps * 10, p50: 1, p99: 2, statuses: { 201: rps * 10 }, cpuUsPerRequest: { server, postgres: 100, rabbitmq: 50, load: 20 } });
const drained = (rps: number, postgres: number): DrainRun => ({ backlog: 1000, completed: rps * 8, seconds: 8, rps, ranDry: false, cpuUsPerInvocation: { consumer: 100, postgres, model: 10 } });
const times = <T>(n: number, make: () => T) => Array.from({ length: n }, make);

const report: QueuesReport = {
  rounds: 5,
  durationSec: 10,
  enqueue: { naive: times(5, () => served(1000, 200)), didyma: times(5, () => served(1100, 400)), jobQueue: times(5, () => served(500, 300)) },
  read: { naive: times(5, () => served(3000, 100)), didyma: times(5, () => served(3300, 120)) },
  drains: [{ model: '20 ms model', directP50: 20, runs: { naive: times(5, () => drained(300, 500)), didyma: times(5, () => drained(320, 700)), jobQueue: times(5, () => drained(250, 600)), fifo: times(5, () => drained(340, 600)) } }],
};

describe('bench: the issue’s targets', () => {
  it('judges POST and GET against the naive baselines, throughput and the whole stack’s CPU per POST', () => {
    const [post, cpu, get] = queueTargets(report);
    expect(post!.value).to.be.closeTo(1.1, 1e-9);
    expect(post!.verdict).to.equal('met');
    expect(cpu!.value).to.be.closeTo(550 / 350, 1e-9);
    expect(cpu!.verdict).to.equal('missed');
    expect(get!.verdict).to.equal('met');
  });

  it('judges each drain against pg-boss, the naive executor, its PostgreSQL CPU and the FIFO claim', () => {
    const drains = queueTargets(report).slice(3);
    expect(drains.map((t) => t.baselineName)).to.deep.equal(['pg-boss worker', 'naive executor', 'naive executor', 'FIFO claim, platform table']);
    expect(drains.map((t) => t.verdict)).to.deep.equal(['met', 'met', 'missed', 'met']);
  });

  it('bounds the queued p50 by one and a half times the run’s floors, and p99 by 25 ms, over the direct calls', () => {
    const floors = { postgres: { p50: 0.5 }, broker: { delivery: { p50: 2 } } };
    expect(floorsMs(floors)).to.equal(3.5);
    const pair = (direct: number, endToEnd: number) => ({ endToEnd: { p50: endToEnd, p99: endToEnd + 20, count: 100 }, direct: { p50: direct, p99: direct }, over: { p50: endToEnd - direct, p99: endToEnd + 20 - direct } });
    const [p50, p99] = latencyTargets([pair(10, 14), pair(10, 15), pair(11, 15)], floors);
    expect(p50!.bound).to.equal(5.25);
    expect(p50!.value).to.equal(4);
    expect(p50!.verdict).to.equal('met');
    expect(p99!.value).to.equal(24);
    expect(p99!.verdict).to.equal('met');
  });

  it('holds each platform process under 150 MiB and leaves other processes out', () => {
    const MiB = 1024 * 1024;
    const targets = rssTargets({ public: 120 * MiB, executor: 160 * MiB, 'model-server': 400 * MiB }, ['auth', 'public', 'executor']);
    expect(targets.map((t) => [t.what, t.verdict])).to.deep.equal([
      ['peak RSS of public, MiB', 'met'],
      ['peak RSS of executor, MiB', 'missed'],
    ]);
  });
});
