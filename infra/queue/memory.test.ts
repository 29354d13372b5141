import { expect } from 'chai';
import { MemoryQueue } from './memory.js';
import { DELIVERY_LIMIT } from './queue.js';

const tick = () => new Promise((resolve) => setTimeout(resolve, 5));

describe('MemoryQueue', () => {
  it('delivers every published id once when the handler succeeds, at most `concurrency` at a time', async () => {
    const queue = new MemoryQueue();
    const seen: string[] = [];
    let running = 0;
    let peak = 0;
    await queue.consume(async (id) => {
      running += 1;
      peak = Math.max(peak, running);
      await tick();
      seen.push(id);
      running -= 1;
    }, 2);
    await queue.publish(['a', 'b', 'c', 'd']);
    while (seen.length < 4) await tick();
    expect(seen).to.have.members(['a', 'b', 'c', 'd']);
    expect(peak).to.equal(2);
    await queue.close();
  });

  it('redelivers a failed message and dead-letters it after the delivery limit', async () => {
    const queue = new MemoryQueue();
    const attempts: number[] = [];
    await queue.consume(async (_id, delivery) => {
      attempts.push(delivery.attempt);
      throw new Error('boom');
    }, 1);
    await queue.publish(['poison']);
    while (queue.deadLetters.length === 0) await tick();
    expect(attempts).to.deep.equal(Array.from({ length: DELIVERY_LIMIT }, (_, i) => i + 1));
    expect(queue.deadLetters).to.deep.equal(['poison']);
    await queue.close();
  });

  it('keeps messages published before any consumer', async () => {
    const queue = new MemoryQueue();
    await queue.publish(['early']);
    const seen: string[] = [];
    await queue.consume(async (id) => {
      seen.push(id);
    }, 1);
    await tick();
    expect(seen).to.deep.equal(['early']);
  });

  it('lets in-flight work finish when a consumer stops', async () => {
    const queue = new MemoryQueue();
    let finished = false;
    const consumer = await queue.consume(async () => {
      await tick();
      finished = true;
    }, 1);
    await queue.publish(['x']);
    await consumer.stop();
    expect(finished).to.equal(true);
  });
});
