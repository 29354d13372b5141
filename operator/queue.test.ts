import { expect } from 'chai';
import { WorkQueue } from './queue.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('controller work queue', () => {
  it('queues a key once however many times it is added', async () => {
    const queue = new WorkQueue({ baseDelayMs: 10, maxDelayMs: 100 });
    queue.add('ns/a');
    queue.add('ns/a');
    queue.add('ns/b');
    expect(queue.length).to.equal(2);
    expect(await queue.get()).to.equal('ns/a');
    expect(await queue.get()).to.equal('ns/b');
  });

  it('never hands a key being processed to a second worker; a change meanwhile queues it again after', async () => {
    const queue = new WorkQueue({ baseDelayMs: 10, maxDelayMs: 100 });
    queue.add('ns/a');
    const key = await queue.get();
    queue.add('ns/a');
    expect(queue.length).to.equal(0);
    queue.done(key!);
    expect(queue.length).to.equal(1);
    expect(await queue.get()).to.equal('ns/a');
  });

  it('wakes a waiting worker when a key arrives', async () => {
    const queue = new WorkQueue({ baseDelayMs: 10, maxDelayMs: 100 });
    const next = queue.get();
    queue.add('ns/late');
    expect(await next).to.equal('ns/late');
  });

  it('backs off exponentially per key up to the cap, and forgets on success', () => {
    const queue = new WorkQueue({ baseDelayMs: 100, maxDelayMs: 1000 });
    const delays = [1, 2, 3, 4, 5, 6].map(() => queue.addRateLimited('ns/failing'));
    expect(delays).to.deep.equal([100, 200, 400, 800, 1000, 1000]);
    queue.forget('ns/failing');
    expect(queue.addRateLimited('ns/failing')).to.equal(100);
    queue.shutDown();
  });

  it('adds delayed keys after their delay, the earliest request winning', async () => {
    const queue = new WorkQueue({ baseDelayMs: 10, maxDelayMs: 100 });
    queue.addAfter('ns/a', 500);
    queue.addAfter('ns/a', 20);
    expect(queue.length).to.equal(0);
    await sleep(60);
    expect(queue.length).to.equal(1);
    queue.shutDown();
  });

  it('answers undefined to workers once shut down', async () => {
    const queue = new WorkQueue({ baseDelayMs: 10, maxDelayMs: 100 });
    const waiting = queue.get();
    queue.shutDown();
    expect(await waiting).to.equal(undefined);
    expect(await queue.get()).to.equal(undefined);
  });
});
