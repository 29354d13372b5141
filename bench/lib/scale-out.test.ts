import { expect } from 'chai';
import { boundOf, connectionFigures, cpuFigures, deltaOver, kneeOf, projectTo, scaleOutTable, steadyWindow, type CpuGroup, type ScaleOutReport, type ScaleOutRow } from './scale-out.js';

const cores = (host: number, others: Partial<Record<CpuGroup, number>> = {}): Record<CpuGroup, number> => ({ executors: 0, database: 0, postgres: 0, model: 0, servers: 0, broker: 0, bench: 0, host, ...others });
const connections = { peak: 12, executors: 8, peakActive: 3, meanActive: 1.5 };

function row(executors: number, rps: number, fields: Partial<ScaleOutRow> = {}): ScaleOutRow {
  return {
    executors,
    queued: 1000,
    completed: 1000,
    failed: 0,
    whole: { seconds: 1000 / rps, rps },
    steady: { from: 0, to: 800_000 / rps, completed: 800, rps },
    claimsPerSecond: rps / 4,
    rowsPerClaim: 4,
    completionWritesPerSecond: rps / 2,
    cores: cores(1),
    cpuUsPerInvocation: { executors: 400, database: 250, postgres: 300, model: 50, servers: 10, broker: 100, bench: 20, host: 900 },
    connections,
    modelCallsInFlight: 4,
    slots: executors * 8,
    bound: '',
    ...fields,
  };
}

describe('bench: scale-out, the steady part of a drain', () => {
  it('counts the completions between the 10% and 90% quantiles, per second between them', () => {
    // One completion every 10 ms for 101 completions, in any order: 80 intervals of 10 ms between the 10th and the 90th.
    const times = Array.from({ length: 101 }, (_, i) => 5000 + i * 10).reverse();
    expect(steadyWindow(times)).to.deep.equal({ from: 5100, to: 5900, completed: 80, rps: 100 });
  });

  it('leaves a slow start and a slow tail out', () => {
    // 10 slow completions at the start (1 a second), 80 at 200 a second, 10 slow ones at the end.
    const start = Array.from({ length: 10 }, (_, i) => i * 1000);
    const steady = Array.from({ length: 80 }, (_, i) => 10_000 + i * 5);
    const tail = Array.from({ length: 10 }, (_, i) => 20_000 + i * 1000);
    const window = steadyWindow([...start, ...steady, ...tail]);
    expect(window.from).to.equal(10_000);
    expect(window.rps).to.be.closeTo(200, 0.01);
  });

  it('starts no sooner than the last executor was ready', () => {
    const times = Array.from({ length: 101 }, (_, i) => i * 10);
    expect(steadyWindow(times, 500)).to.deep.equal({ from: 500, to: 900, completed: 40, rps: 100 });
    expect(steadyWindow(times, 50)).to.include({ from: 100, completed: 80 });
    expect(steadyWindow(times, 2000).completed).to.equal(0);
  });

  it('has no rate when too few completed', () => {
    expect(Number.isNaN(steadyWindow([1000]).rps)).to.equal(true);
    expect(steadyWindow([]).completed).to.equal(0);
  });
});

describe('bench: scale-out, counters over a window', () => {
  const samples = [0, 500, 1000, 1500, 2000].map((at) => ({ at, values: { cpu: at / 100, claims: at / 10 } }));

  it('takes the samples that bracket the window', () => {
    expect(deltaOver(samples, 600, 1400)).to.deep.equal({ seconds: 1, values: { cpu: 10, claims: 100 } });
    expect(deltaOver(samples, 500, 1500)).to.deep.equal({ seconds: 1, values: { cpu: 10, claims: 100 } });
  });

  it('takes the nearest samples when the window runs past them, and nothing without two', () => {
    expect(deltaOver(samples, -100, 5000)).to.deep.equal({ seconds: 2, values: { cpu: 20, claims: 200 } });
    expect(deltaOver(samples.slice(0, 1), 0, 100)).to.equal(undefined);
  });

  it('gives cores busy and µs per invocation of each CPU group', () => {
    const values = { executors: 2, database: 1, postgres: 1.5, model: 0.2, servers: 0.1, broker: 0.4, bench: 0.04, host: 4 };
    const figures = cpuFigures({ seconds: 4, values }, 4000);
    expect(figures.cores).to.deep.equal({ executors: 0.5, database: 0.25, postgres: 0.38, model: 0.05, servers: 0.03, broker: 0.1, bench: 0.01, host: 1 });
    expect(figures.cpuUsPerInvocation).to.deep.equal({ executors: 500, database: 250, postgres: 375, model: 50, servers: 25, broker: 100, bench: 10, host: 1000 });
  });
});

describe('bench: scale-out, connections', () => {
  it('gives the most connections seen, the executors’ among them, and how many of theirs were busy', () => {
    const during = [
      { total: 9, executors: 4, executorsActive: 2 },
      { total: 14, executors: 11, executorsActive: 4 },
      { total: 12, executors: 11, executorsActive: 0 },
    ];
    expect(connectionFigures(during)).to.deep.equal({ peak: 14, executors: 11, peakActive: 4, meanActive: 2 });
  });
});

describe('bench: scale-out, what bounds the drain', () => {
  const machine = { cpus: 2, poolMax: 10, executors: 2 };

  it('is the model calls when most slots are busy', () => {
    expect(boundOf({ modelCallsInFlight: 14, slots: 16, cores: cores(2), connections }, machine)).to.equal('the model calls (88% of 16 slots busy)');
  });

  it('is the host’s CPU when it is busy, naming the group that took most', () => {
    const busy = cores(1.9, { postgres: 0.9, executors: 0.6, model: 0.1 });
    expect(boundOf({ modelCallsInFlight: 4, slots: 16, cores: busy, connections }, machine)).to.equal("the host's CPU (1.9 of 2 cores busy; most: PostgreSQL, 0.9)");
    const others = cores(1.95, { postgres: 0.3, executors: 0.4, broker: 0.2, bench: 0.05 });
    expect(boundOf({ modelCallsInFlight: 4, slots: 16, cores: others, connections }, machine)).to.match(/most: the rest of the host, 1\)$/);
  });

  it('is the connections when every pooled connection is running a statement', () => {
    expect(boundOf({ modelCallsInFlight: 4, slots: 16, cores: cores(1), connections: { ...connections, peakActive: 20 } }, machine)).to.equal("the connections (20 active of 20 in the executors' pools)");
  });

  it('is the round trips when nothing else is full', () => {
    expect(boundOf({ modelCallsInFlight: 4, slots: 16, cores: cores(1), connections }, machine)).to.equal('round trips (25% of the slots busy, CPU and connections to spare)');
  });
});

describe('bench: scale-out, the knee', () => {
  it('is the fewest executors after which the next count gains less than a tenth', () => {
    const knee = kneeOf([row(4, 640), row(1, 300), row(2, 600), row(8, 720)]);
    expect(knee?.row.executors).to.equal(2);
    expect(knee?.reached).to.equal(true);
  });

  it('is the most executors, not reached, when every step gains', () => {
    const knee = kneeOf([row(1, 300), row(2, 600), row(4, 1100)]);
    expect(knee).to.deep.include({ reached: false });
    expect(knee?.row.executors).to.equal(4);
    expect(kneeOf([])).to.equal(undefined);
  });
});

describe('bench: scale-out, on paper', () => {
  it('scales the statements and CPU per invocation to the fleet’s rate, and the connections per executor to its size', () => {
    const measured = row(2, 500, { connections: { ...connections, executors: 6, meanActive: 0.5 } });
    expect(projectTo(measured, { executors: 100, rate: 10_000, poolMax: 10 })).to.deep.equal({
      claimsPerSecond: 2500,
      claimsPerSecondAtMost: 10_000,
      completionWritesPerSecond: 5000,
      databaseCores: 2.5,
      connections: { measured: 300, pools: 1100, busy: 10 },
    });
  });

  it('prints a row per count, the knee and the projection', () => {
    const rows = [row(1, 300, { bound: 'round trips' }), row(2, 310, { bound: 'the model calls' })];
    const report: ScaleOutReport = {
      date: '2026-12-06T00:00:00.000Z',
      machine: { cpus: 2, model: 'x', loadavgBefore: [0, 0, 0], loadavgAfter: [0, 0, 0] },
      settings: { counts: [1, 2], queued: 1000, modelMs: 20, concurrency: 8, poolMax: 10, workspaces: 4, sessionsPerWorkspace: 4, databaseTransport: 'socket' },
      rows,
      knee: { executors: 1, reached: true, claimsPerSecond: 75 },
      fleet: { executors: 100, rate: 10_000, poolMax: 10 },
      projection: projectTo(rows[0]!, { executors: 100, rate: 10_000, poolMax: 10 }),
    };
    const table = scaleOutTable(report);
    expect(table.split('\n').filter((line) => line.startsWith('| 1 ') || line.startsWith('| 2 '))).to.have.length(2);
    expect(table).to.include('Knee: 1 executor, 75 claims/s.');
    expect(table).to.include('On paper, 100 executors at 10,000 invocations/s: 2,500 claims/s');
  });
});
