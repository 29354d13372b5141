import { expect } from 'chai';
import type { Ring } from '../../infra/queue/queue.js';
import { Doorbell } from './doorbell.js';

describe('Doorbell', () => {
  it('sends the runs queued in one task as one wake-up that counts them, and nothing for none', async () => {
    const sent: Ring[] = [];
    const doorbell = new Doorbell({ ring: (ring: Ring) => void sent.push(ring) });
    doorbell.ring();
    doorbell.ring(3);
    doorbell.ring(0);
    expect(sent, 'nothing before the task ends').to.deep.equal([]);
    await new Promise((resolve) => setImmediate(resolve));
    doorbell.ring();
    await new Promise((resolve) => setImmediate(resolve));
    expect(sent).to.deep.equal([
      { count: 4, hops: 0 },
      { count: 1, hops: 0 },
    ]);
  });
});
