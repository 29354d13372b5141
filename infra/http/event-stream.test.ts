import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Request, Response } from 'express';
import { expect } from 'chai';
import pino from 'pino';
import { sendEventStream, type StreamFollower } from './event-stream.js';
import { until } from '../../test/support/until.js';

/** A server of one event stream whose source the test drives through `follower`. */
async function streamServer() {
  const state: { follower?: StreamFollower<string>; stopped: boolean } = { stopped: false };
  const server = http.createServer((req, res) => {
    void sendEventStream(req as Request, res as unknown as Response, {
      event: 'item',
      data: (item) => item,
      follow: (follower) => ((state.follower = follower), () => void (state.stopped = true)),
      stopping: () => false,
      heartbeatMs: 60_000,
      logger: pino({ level: 'silent' }),
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const controller = new AbortController();
  const response = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`, { signal: controller.signal });
  const reader = response.body!.getReader();
  let text = '';
  return {
    state,
    async readUntil(part: string) {
      while (!text.includes(part)) {
        const { value, done } = await reader.read();
        if (done) break;
        text += new TextDecoder().decode(value);
      }
      return text;
    },
    close() {
      controller.abort();
      server.closeAllConnections();
      server.close();
    },
  };
}

describe('event stream: writes what its source hands it', () => {
  it('sends each batch as it comes, the position on its last item only', async () => {
    const stream = await streamServer();
    try {
      await until(async () => stream.state.follower !== undefined, 'the stream to follow its source');
      stream.state.follower!.deliver({ position: 'p1', items: ['a', 'b'] });
      const text = await stream.readUntil('"b"');
      expect(text).to.include('event: item\ndata: "a"\n\nid: p1\nevent: item\ndata: "b"\n\n');
    } finally {
      stream.close();
    }
  });

  it('ends when its source fails, and stops following it', async () => {
    const stream = await streamServer();
    try {
      await until(async () => stream.state.follower !== undefined, 'the stream to follow its source');
      stream.state.follower!.fail(new Error('database gone'));
      await until(async () => stream.state.stopped, 'the stream to stop following');
      await stream.readUntil('never sent'); // returns at the end of the response
    } finally {
      stream.close();
    }
  });

  it('stops following its source when the client leaves', async () => {
    const stream = await streamServer();
    await until(async () => stream.state.follower !== undefined, 'the stream to follow its source');
    stream.close();
    await until(async () => stream.state.stopped, 'the stream to stop following');
  });
});
