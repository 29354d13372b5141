import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Request, Response } from 'express';
import { expect } from 'chai';
import pino from 'pino';
import { sendEventStream } from './event-stream.js';

describe('event stream: reads as soon as a change is announced', () => {
  it('reads again at once after a change announced during a read', async () => {
    const reads: number[] = [];
    let announce: () => void = () => undefined;
    const source = {
      from: '0',
      read: async (position: string) => {
        reads.push(Date.now());
        if (reads.length === 1) setTimeout(() => announce(), 10);
        await new Promise((resolve) => setTimeout(resolve, 50));
        return { position: String(Number(position) + 1), items: reads.length === 2 ? ['changed'] : [] };
      },
    };
    const server = http.createServer((req, res) => {
      void sendEventStream(req as Request, res as unknown as Response, source, {
        event: 'item',
        data: (item) => item,
        subscribe: (listener) => ((announce = listener), () => undefined),
        following: () => true,
        stopping: () => false,
        heartbeatMs: 60_000,
        pollMs: 60_000,
        logger: pino({ level: 'silent' }),
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const controller = new AbortController();
    try {
      const response = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`, { signal: controller.signal });
      const reader = response.body!.getReader();
      let text = '';
      while (!text.includes('changed')) text += new TextDecoder().decode((await reader.read()).value);
      expect(reads[1]! - reads[0]!).to.be.below(150);
    } finally {
      controller.abort();
      server.closeAllConnections();
      server.close();
    }
  });
});
