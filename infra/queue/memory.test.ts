import { expect } from 'chai';
import { MemoryQueue } from './memory.js';
import { decodeRing, encodeRing } from './queue.js';

const tick = () => new Promise((resolve) => setTimeout(resolve, 5));

describe('MemoryQueue', () => {
  it('gives each wake-up to one listener, in turn, after the current task', async () => {
    const queue = new MemoryQueue();
    const heard: string[] = [];
    await queue.listen((ring) => heard.push(`a${ring.count}`));
    await queue.listen((ring) => heard.push(`b${ring.count}`));
    queue.ring({ count: 1, hops: 0 });
    queue.ring({ count: 2, hops: 0 });
    expect(heard, 'nothing before the current task ends').to.deep.equal([]);
    await tick();
    expect(heard.sort()).to.deep.equal(['a2', 'b1']);
    await queue.close();
  });

  it('gives nothing to a listener that stopped', async () => {
    const queue = new MemoryQueue();
    const heard: number[] = [];
    const listener = await queue.listen((ring) => heard.push(ring.count));
    await listener.stop();
    queue.ring({ count: 3, hops: 0 });
    await tick();
    expect(heard).to.deep.equal([]);
  });
});

describe('wake-up messages', () => {
  it("reads back what was sent, and counts an older sender's message (an invocation id) as one run", () => {
    expect(decodeRing(encodeRing({ count: 12, hops: 1 }))).to.deep.equal({ count: 12, hops: 1 });
    expect(decodeRing(Buffer.from('0b7f2c5e-6a43-4b8e-9f7e-2d1c3b4a5e6f'))).to.deep.equal({ count: 1, hops: 0 });
    expect(decodeRing(Buffer.from('{"count":-4,"hops":"x"}'))).to.deep.equal({ count: 1, hops: 0 });
  });
});
