import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request a receiver got, and what it answered. */
export interface ReceivedWebhook {
  path: string;
  headers: Record<string, string>;
  body: string;
  status: number;
}

/**
 * A webhook receiver on loopback that can be down (connections refused), up
 * but failing (503), or up: what Standard Webhooks senders must ride out.
 */
export interface WebhookReceiver {
  /** The base URL, without a trailing slash. */
  url: string;
  received: ReceivedWebhook[];
  /** webhook-ids answered 2xx, as often as each was. */
  accepted(): Map<string, number>;
  refuse(): Promise<void>;
  fail(status?: number): Promise<void>;
  accept(): Promise<void>;
  /** Answers each request only after `ms`: a slow receiver. */
  delay(ms: number): void;
  /** Requests it holds unanswered now. */
  pending(): number;
  close(): Promise<void>;
}

export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  let answer = 200;
  let delayMs = 0;
  let held = 0;
  const received: ReceivedWebhook[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const status = answer;
      const reply = () => {
        received.push({ path: req.url ?? '', headers: req.headers as Record<string, string>, body: Buffer.concat(chunks).toString('utf8'), status });
        res.writeHead(status, { 'content-type': 'application/json' }).end(status < 300 ? '{"ok":true}' : '{"message":"try again later"}');
      };
      if (!delayMs) return reply();
      held += 1;
      setTimeout(() => {
        held -= 1;
        reply();
      }, delayMs);
    });
  });
  const listen = (port: number) => new Promise<void>((ready) => server.listen(port, '127.0.0.1', ready));
  const stop = () =>
    new Promise<void>((done) => {
      server.closeAllConnections();
      server.close(() => done());
    });
  await listen(0);
  const { port } = server.address() as AddressInfo;
  let listening = true;
  const up = async () => {
    if (!listening) await listen(port);
    listening = true;
  };
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    accepted() {
      const ids = new Map<string, number>();
      for (const request of received) if (request.status < 300) ids.set(request.headers['webhook-id']!, (ids.get(request.headers['webhook-id']!) ?? 0) + 1);
      return ids;
    },
    async refuse() {
      if (listening) await stop();
      listening = false;
    },
    async fail(status = 503) {
      answer = status;
      await up();
    },
    async accept() {
      answer = 200;
      await up();
    },
    delay(ms) {
      delayMs = ms;
    },
    pending: () => held,
    async close() {
      if (listening) await stop();
      listening = false;
    },
  };
}
