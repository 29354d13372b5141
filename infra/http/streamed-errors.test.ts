import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { expect } from 'chai';
import express, { type ErrorRequestHandler } from 'express';
import { pino } from 'pino';
import { listen } from '../../test/support/platform.js';
import { errorHandler } from './errors.js';
import { requestLog } from './request-log.js';
import { until } from '../../test/support/until.js';
import { jsonLines } from '../../test/support/capture.js';

const CHUNK = Buffer.alloc(64 * 1024, 97);

/** A large download, or one whose source fails after its first chunks. */
function download(failAfter?: number): Readable {
  return Readable.from(
    (function* () {
      for (let i = 0; i < 1600; i++) {
        if (i === failAfter) throw new Error('the storage read failed');
        yield CHUNK;
      }
    })(),
  );
}

describe('errors of a streamed answer', () => {
  const lines: Array<{ level: number; msg: string }> = [];
  const passedOn: unknown[] = [];
  let url: string;
  let close: () => void;

  before(async () => {
    const sink = jsonLines(lines);
    const logger = pino({ level: 'info' }, sink);
    const app = express();
    app.use(requestLog(logger, new Set()));
    app.get('/records', (_req, res, next) => void pipeline(download(), res).catch(next));
    app.get('/broken', (_req, res, next) => void pipeline(download(3), res).catch(next));
    app.use(errorHandler(logger));
    // What gets here, express's own handler would print as a bare stack trace.
    app.use(((error, _req, _res, next) => (passedOn.push(error), next())) as ErrorRequestHandler);
    const listening = await listen(app);
    url = listening.url;
    close = () => listening.server.close();
  });
  after(() => close());
  beforeEach(() => {
    lines.length = 0;
    passedOn.length = 0;
  });

  it('logs a download the client stopped reading as one line, abandoned, and no error', async () => {
    const stop = new AbortController();
    const reply = await fetch(`${url}/records`, { signal: stop.signal });
    await reply.body!.getReader().read();
    stop.abort();
    await until(async () => lines.length > 0, 'the request line');
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(lines.map((line) => [line.level, line.msg])).to.deep.equal([[30, 'request abandoned by the client']]);
    expect(passedOn).to.deep.equal([]);
  });

  it('cuts the connection when the source fails mid-answer, with one structured error line', async () => {
    const reply = await fetch(`${url}/broken`);
    expect(reply.status).to.equal(200);
    const read = await reply.arrayBuffer().then(
      () => 'complete',
      () => 'cut',
    );
    expect(read).to.equal('cut');
    await until(async () => lines.length >= 2, 'the error and request lines');
    expect(lines.filter((line) => line.level >= 50).map((line) => line.msg)).to.include('request failed after its answer began');
    expect(passedOn).to.deep.equal([]);
  });
});
