import { execFileSync, spawn } from 'node:child_process';
import os from 'node:os';
import { expect } from 'chai';
import { pin, placementMode, planPlacement } from './placement.js';

/** The CPUs process `pid` may run on, as the kernel lists them (e.g. "0-1"). */
const allowedCpus = (pid: number) => execFileSync('taskset', ['--cpu-list', '--pid', String(pid)], { encoding: 'utf8' }).split(':').pop()!.trim();

describe('bench placement: the model server and the executor on separate CPUs', () => {
  it('gives the model server the last CPU and the executor the others', () => {
    expect(planPlacement('split', 2, true)).to.deep.equal({ mode: 'split', modelCpus: '1', executorCpus: '0' });
    expect(planPlacement('split', 8, true)).to.deep.equal({ mode: 'split', modelCpus: '7', executorCpus: '0-6' });
  });

  it('shares when asked to, on one CPU, or without taskset', () => {
    const shared = { mode: 'shared', modelCpus: '', executorCpus: '' };
    expect(planPlacement('shared', 4, true)).to.deep.equal(shared);
    expect(planPlacement('split', 1, true)).to.deep.equal(shared);
    expect(planPlacement('split', 4, false)).to.deep.equal(shared);
  });

  it('refuses an unknown BENCH_PLACEMENT', () => {
    expect(placementMode('split')).to.equal('split');
    expect(() => placementMode('apart')).to.throw('BENCH_PLACEMENT=apart: expected split (the default) or shared');
  });

  it('binds a running process to the CPUs given, and leaves it alone when they are empty', function () {
    const plan = planPlacement('split', os.cpus().length);
    if (plan.mode === 'shared') this.skip(); // one CPU or no taskset: nothing to bind
    const child = spawn('sleep', ['30'], { stdio: 'ignore' });
    try {
      const before = allowedCpus(child.pid!);
      pin(child.pid, '');
      expect(allowedCpus(child.pid!)).to.equal(before);
      pin(child.pid, plan.modelCpus);
      expect(allowedCpus(child.pid!)).to.equal(plan.modelCpus);
    } finally {
      child.kill();
    }
  });
});
