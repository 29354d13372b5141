import { expect } from 'chai';
import { cpuOfGroupsSince, cpuOfSelfSince, postmasterOf } from './cpu.js';

describe('bench: CPU by process group', () => {
  it('finds no postmaster for a data directory no server serves', () => {
    expect(Number.isNaN(postmasterOf('/nowhere/no-such-data-directory'))).to.equal(true);
  });

  it('counts the load generator’s own CPU as it spends it', () => {
    const spent = cpuOfSelfSince();
    const until = Date.now() + 50;
    while (Date.now() < until) Math.sqrt(Math.random());
    expect(spent()).to.be.greaterThan(0);
  });

  it('gives every group a figure, none where no process of it was found', () => {
    const seconds = cpuOfGroupsSince([process.pid], NaN)();
    expect(Object.keys(seconds)).to.deep.equal(['server', 'postgres', 'rabbitmq', 'load']);
    expect(seconds.postgres).to.equal(0);
    expect(Number.isFinite(seconds.server)).to.equal(true);
  });
});
