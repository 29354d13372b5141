import { Writable } from 'node:stream';
import { expect } from 'chai';
import { pino, type Logger } from 'pino';
import { createLogger } from '../logging/logger.js';
import { RestartingInformer, type ListWatch } from './informer.js';
import type { KubeObject } from './resources.js';

type Callback = (arg: unknown) => void;

/** A client-node informer whose starts fail with the next of `failures` (undefined: a clean start), as a ListWatch reports them. */
function fakeInformer(failures: Array<Error | undefined>) {
  const callbacks: Record<string, Callback[]> = { add: [], update: [], delete: [], error: [] };
  const informer = {
    starts: 0,
    stops: 0,
    emit: (verb: string, arg: unknown) => callbacks[verb]!.forEach((callback) => callback(arg)),
    on: (verb: string, callback: Callback) => callbacks[verb]!.push(callback),
    off: () => undefined,
    get: () => undefined,
    list: () => [],
    async start() {
      informer.starts += 1;
      const failure = failures.shift();
      if (failure) informer.emit('error', failure);
    },
    async stop() {
      informer.stops += 1;
    },
  };
  return informer;
}

const object = (name: string): KubeObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name } });
const until = async (check: () => boolean) => {
  for (let i = 0; i < 200 && !check(); i++) await new Promise((resolve) => setTimeout(resolve, 5));
};

/** A logger that keeps the backoff of each restart it announces. */
function restartLog() {
  const delays: number[] = [];
  const logger = pino({ level: 'warn' }, new Writable({ write: (chunk, _enc, done) => (delays.push(JSON.parse(String(chunk)).retryInMs), done()) }));
  return { delays, logger };
}

function restarting(informer: ReturnType<typeof fakeInformer>, changes: string[] = [], logger: Logger = createLogger('silent')) {
  return new RestartingInformer<KubeObject>({
    informer: async () => informer as unknown as ListWatch<KubeObject>,
    onChange: (name, value) => changes.push(`${name}:${value ? 'set' : 'gone'}`),
    logger,
    retryMs: 10,
    maxRetryMs: 40,
  });
}

describe('restarting informer', () => {
  it('is synced once started, and reports every change by name', async () => {
    const informer = fakeInformer([]);
    const changes: string[] = [];
    const cache = restarting(informer, changes);
    await cache.start();
    expect(cache.hasSynced).to.equal(true);
    informer.emit('add', object('a'));
    informer.emit('update', object('a'));
    informer.emit('delete', object('a'));
    expect(changes).to.deep.equal(['a:set', 'a:set', 'a:gone']);
    await cache.stop();
  });

  it('fails to start, and stops, when its first list fails', async () => {
    const informer = fakeInformer([new Error('forbidden')]);
    const cache = restarting(informer);
    const error = await cache.start().catch((e: unknown) => e);
    expect((error as Error).message).to.equal('forbidden');
    expect([cache.hasSynced, informer.stops]).to.deep.equal([false, 1]);
  });

  it('starts again after a failure, backing off while it keeps failing', async () => {
    const informer = fakeInformer([undefined, new Error('refused'), new Error('refused')]);
    const log = restartLog();
    const cache = restarting(informer, [], log.logger);
    await cache.start();
    informer.emit('error', new Error('connection reset'));
    await until(() => informer.starts === 4);
    // The backoff it chose before each start, as it logs it: 10 ms, then 20, then 40 before the clean start.
    expect(log.delays).to.deep.equal([10, 20, 40]);
    expect(cache.hasSynced).to.equal(true);
    await cache.stop();
  });

  it('does not start again once stopped (stopping aborts the watch, which reports an error)', async () => {
    const informer = fakeInformer([]);
    const log = restartLog();
    const cache = restarting(informer, [], log.logger);
    await cache.start();
    await cache.stop();
    informer.emit('error', new Error('aborted'));
    // A restart is announced when it is scheduled, synchronously on the error: none was.
    expect(log.delays).to.deep.equal([]);
    expect(informer.starts).to.equal(1);
  });
});
