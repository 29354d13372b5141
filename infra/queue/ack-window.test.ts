import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'chai';
import type { Message } from 'amqplib';
import { AckWindow } from './ack-window.js';

/** A channel stand-in that records the frames it is asked to send, by delivery tag. */
function recordingChannel() {
  const frames: string[] = [];
  const tag = (m: Message) => m.fields.deliveryTag;
  return {
    frames,
    ack: (m: Message, allUpTo = false) => void frames.push(`ack ${tag(m)}${allUpTo ? ' and before' : ''}`),
    nack: (m: Message, allUpTo = false, requeue = true) => void frames.push(`nack ${tag(m)}${allUpTo ? ' and before' : ''}${requeue ? ' requeue' : ''}`),
  };
}

const delivery = (deliveryTag: number) => ({ fields: { deliveryTag } }) as Message;

function windowOf(maxHeld: number, maxDelayMs = 60_000) {
  const channel = recordingChannel();
  const window = new AckWindow(channel, { maxHeld, maxDelayMs });
  const messages = [1, 2, 3, 4, 5].map(delivery);
  messages.forEach((m) => window.received(m));
  return { channel, window, messages };
}

describe('queue ack window', () => {
  it('holds finished deliveries until maxHeld of them wait, then settles them with one multiple ack', () => {
    const { channel, window, messages } = windowOf(3);
    window.finished(messages[0]!);
    window.finished(messages[1]!);
    expect(channel.frames).to.deep.equal([]);
    window.finished(messages[2]!);
    expect(channel.frames).to.deep.equal(['ack 3 and before']);
  });

  it('never lets a multiple ack cover a delivery still being handled: those finished behind it go one by one', () => {
    const { channel, window, messages } = windowOf(3);
    window.finished(messages[0]!);
    window.finished(messages[2]!); // 2 is still running
    window.finished(messages[3]!);
    expect(channel.frames).to.deep.equal(['ack 1 and before', 'ack 3', 'ack 4']);
    window.finished(messages[1]!);
    window.flush();
    expect(channel.frames.slice(3)).to.deep.equal(['ack 2 and before']);
  });

  it('sends a batch after maxDelayMs without waiting for more', async () => {
    const { channel, window, messages } = windowOf(10, 20);
    window.finished(messages[0]!);
    expect(channel.frames).to.deep.equal([]);
    await sleep(40);
    expect(channel.frames).to.deep.equal(['ack 1 and before']);
  });

  it('requeues a failed delivery at once, and no later multiple ack covers it', () => {
    const { channel, window, messages } = windowOf(2);
    window.requeue(messages[0]!);
    expect(channel.frames).to.deep.equal(['nack 1 requeue']);
    window.finished(messages[1]!);
    window.finished(messages[2]!);
    expect(channel.frames).to.deep.equal(['nack 1 requeue', 'ack 3 and before']);
  });

  it('settles each delivery once, whatever is reported twice', () => {
    const { channel, window, messages } = windowOf(1);
    window.finished(messages[0]!);
    window.finished(messages[0]!);
    window.requeue(messages[0]!);
    window.flush();
    expect(channel.frames).to.deep.equal(['ack 1 and before']);
  });

  it('sends nothing once its channel is closed, and survives a channel that throws', async () => {
    const closed = windowOf(10, 10);
    closed.window.finished(closed.messages[0]!);
    closed.window.close();
    closed.window.finished(closed.messages[1]!);
    closed.window.flush();
    await sleep(30);
    expect(closed.channel.frames).to.deep.equal([]);

    const throwing = new AckWindow(
      {
        ack: () => {
          throw new Error('Channel closed');
        },
        nack: () => undefined,
      },
      { maxHeld: 1, maxDelayMs: 10 },
    );
    throwing.received(delivery(1));
    expect(() => throwing.finished(delivery(1))).not.to.throw();
  });
});
