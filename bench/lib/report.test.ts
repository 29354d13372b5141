import { expect } from 'chai';
import type { LoadResult } from './load.js';
import { drainCpu, placementText, warmDrain, type BenchReport } from './report.js';

const drain = (extra: Partial<BenchReport['executor']> = {}): BenchReport['executor'] => ({ completed: 900, failed: 0, seconds: 1.5, rps: 600, backlog: 1000, ...extra });
const modelMax = (cpuUsPerRequest?: number) => ({ rps: 800, cpuUsPerRequest }) as LoadResult & { cpuUsPerRequest?: number };

describe('bench report: the executor drain row', () => {
  it('says the rate was taken after the warm-up, with the whole drain beside it', () => {
    expect(warmDrain(drain({ warmUpSec: 3, wholeDrain: { completed: 1000, failed: 0, seconds: 2, rps: 500 } }))).to.equal(
      ', after its first 3 s of warm-up (the whole drain, cold start included: 500/s)',
    );
    expect(warmDrain(drain())).to.equal(''); // a run from before the warm-up window
  });

  it('gives the executor’s CPU per invocation and the model server’s per call against its maximum', () => {
    expect(drainCpu(drain({ cpuUsPerInvocation: 812.4, modelCpuUsPerCall: 1490 }), modelMax(1302))).to.equal('executor 812; model server 1,490 per call (1,302 at its maximum)');
    expect(drainCpu(drain({ cpuUsPerInvocation: 812.4, modelCpuUsPerCall: 1490 }), modelMax())).to.equal('executor 812; model server 1,490 per call');
    expect(drainCpu(drain(), modelMax(1302))).to.equal('');
  });
});

describe('bench report: the footer', () => {
  it('says where the model server and the executor ran', () => {
    expect(placementText({ mode: 'split', modelCpus: '1', executorCpus: '0' })).to.equal(
      ' the model server bound to CPU 1 and the executor to CPU 0, every other process where the scheduler put it (BENCH_PLACEMENT=split);',
    );
    expect(placementText({ mode: 'shared', modelCpus: '', executorCpus: '' })).to.equal(' every process where the scheduler put it (BENCH_PLACEMENT=shared);');
    expect(placementText(undefined)).to.equal(''); // a run from before placement
  });
});
