import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import { expect } from 'chai';
import { skipBecause } from '../../test/support/skips.js';
import { autogroupOf, pin, placementMode, planPlacement, prioritize } from './placement.js';

/** The nice value of every thread of process `pid`. */
const niceOf = (pid: number) => fs.readdirSync(`/proc/${pid}/task`).map((thread) => Number(fs.readFileSync(`/proc/${pid}/task/${thread}/stat`, 'utf8').split(') ')[1]!.split(' ')[16]));

/** The autogroup line of process `pid` ("/autogroup-12 nice 0"). */
const autogroupLine = (pid: number) => fs.readFileSync(`/proc/${pid}/autogroup`, 'utf8');

/**
 * `test` with a running node child (in a session of its own when `detached`),
 * killed afterwards. Node, once it runs its script, has its worker threads too.
 */
async function withNodeChild(detached: boolean, test: (pid: number) => void): Promise<void> {
  const child = spawn(process.execPath, ['-e', 'console.log("up"); setTimeout(() => {}, 30000)'], { stdio: ['ignore', 'pipe', 'ignore'], detached });
  try {
    await new Promise((resolve) => child.stdout.once('data', resolve));
    test(child.pid!);
  } finally {
    child.kill();
  }
}

/** The CPUs process `pid` may run on, as the kernel lists them (e.g. "0-1"). */
const allowedCpus = (pid: number) => execFileSync('taskset', ['--cpu-list', '--pid', String(pid)], { encoding: 'utf8' }).split(':').pop()!.trim();

describe('bench placement: the model server and the executor on separate CPUs', () => {
  it('gives the model server the last CPU and the executor the others', () => {
    expect(planPlacement('split', 2, true, true)).to.deep.equal({ mode: 'split', modelCpus: '1', executorCpus: '0', modelNice: -10 });
    expect(planPlacement('split', 8, true, true)).to.deep.equal({ mode: 'split', modelCpus: '7', executorCpus: '0-6', modelNice: -10 });
  });

  it('raises the model server\'s priority only as root', () => {
    expect(planPlacement('split', 2, true, false)).to.deep.equal({ mode: 'split', modelCpus: '1', executorCpus: '0', modelNice: 0 });
  });

  it('shares when asked to, on one CPU, or without taskset', () => {
    const shared = { mode: 'shared', modelCpus: '', executorCpus: '', modelNice: 0 };
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
    if (plan.mode === 'shared') skipBecause(this, 'one CPU or no taskset: nothing to bind');
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

  it('runs a process at the nice value given, every thread, and leaves it alone at 0', async function () {
    if (process.getuid?.() !== 0) skipBecause(this, 'a negative nice needs root');
    await withNodeChild(false, (pid) => {
      prioritize(pid, 0);
      expect(niceOf(pid)).to.satisfy((values: number[]) => values.every((value) => value === 0));
      prioritize(pid, -10);
      expect(niceOf(pid)).to.satisfy((values: number[]) => values.length > 1 && values.every((value) => value === -10));
      // Same session as the test, so the same autogroup: left alone, or the test itself would be lifted.
      if (autogroupOf(pid)) expect(autogroupLine(pid)).to.match(/ nice 0\n?$/);
    });
  });

  it('lifts the autogroup of a process in a session of its own, as the model server is', async function () {
    if (process.getuid?.() !== 0 || !autogroupOf(process.pid)) skipBecause(this, 'needs root, and a kernel with autogroups');
    await withNodeChild(true, (pid) => {
      expect(autogroupOf(pid)).to.not.equal(autogroupOf(process.pid));
      prioritize(pid, -10);
      expect(autogroupLine(pid)).to.match(/ nice -10\n?$/);
    });
  });
});
