import { AuditedRun } from '../support/audited-run.js';
import { Client } from '../support/http.js';
import { freePorts } from '../support/model-servers.js';
import { FLOOD_SETTINGS, quietWhileValidationFloods } from '../support/validation-flood.js';

// The validation flood of api/public/validation-isolation.test.ts against a
// public server in a process of its own, on PostgreSQL and RabbitMQ.

describe('a public server of its own: one workspace flooding its validation threads stalls no one else (real PostgreSQL and RabbitMQ)', function () {
  this.timeout(600_000);
  let run: AuditedRun;
  const closing: Array<{ close(): Promise<void> }> = [];
  before(async () => {
    run = await AuditedRun.start('valflood', 0);
  });
  after(async () => {
    for (const c of closing.reverse()) await c.close();
    await run?.close();
  });

  it("serves a quiet workspace's checks and its /healthz within seconds while another floods the threads, and refuses the flood with 429 past its bound", async () => {
    const [port] = (await freePorts(1)) as [number];
    const server = run.spawn('public', ['serve', 'public'], {
      DIDYMA_PUBLIC_PORT: String(port),
      DIDYMA_VALIDATION_THREADS: String(FLOOD_SETTINGS.validationThreads),
      DIDYMA_VALIDATION_TIMEOUT_MS: String(FLOOD_SETTINGS.validationTimeoutMs),
      DIDYMA_VALIDATION_WAITING_PER_WORKSPACE: String(FLOOD_SETTINGS.validationWaitingPerWorkspace),
    });
    const url = `http://127.0.0.1:${port}`;
    await server.waitReady(`${url}/readyz`, 180_000);
    const pub = new Client(url);
    console.log(`      ${await quietWhileValidationFloods(run.t, pub, [pub, run.t.auth, run.t.private], closing)}`);
  });
});
