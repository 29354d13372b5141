import { expect } from 'chai';
import { ClosingSteps } from './closing.js';

describe('ClosingSteps', () => {
  it('names the steps still running, with their age, and forgets those that settled, failed or not', async () => {
    let clock = 1_000;
    const steps = new ClosingSteps(() => clock);
    let release!: () => void;
    const stuck = steps.run('database', () => new Promise<void>((resolve) => (release = resolve)));
    await steps.run('audit', () => undefined);
    await steps.run('queue', () => Promise.reject(new Error('closed already'))).catch(() => undefined);
    clock += 250;
    expect(steps.pending()).to.deep.equal([{ step: 'database', ms: 250 }]);
    release();
    await stuck;
    expect(steps.pending()).to.deep.equal([]);
  });

  it('keeps two steps of one name apart', async () => {
    const steps = new ClosingSteps(() => 0);
    const never = () => new Promise<void>(() => undefined);
    void steps.run('server', never);
    void steps.run('server', never);
    expect(steps.pending().map(({ step }) => step)).to.deep.equal(['server', 'server (2)']);
  });

  it('passes a failure on to its caller', async () => {
    const steps = new ClosingSteps();
    let caught: unknown;
    await steps.run('queue', () => Promise.reject(new Error('channel gone'))).catch((error: unknown) => (caught = error));
    expect((caught as Error).message).to.equal('channel gone');
  });
});
