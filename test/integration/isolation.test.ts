import { expect } from 'chai';
import { devTarget, probeWhile, registerModel, separateTarget, summary, unserved, workspaceOn, ISOLATION_PASSWORD, type Probe, type Target, type Workspace } from '../support/isolation.js';
import {
  admittedPatternChecks,
  costlyRegistration,
  quietThreadCheck,
  passwordGuesses,
  quietPrediction,
  quietRequests,
  quietWaitingPrediction,
  slowReceiver,
  streamFlood,
  waitFlood,
  type Attack,
  type QuietRequest,
} from '../support/isolation-attacks.js';
import { unique } from '../support/platform.js';

// Each row of docs/security.md's table of shared resources, attacked as the
// issue that asked for it did, on real processes: a noisy workspace (or an
// anonymous client) attacks while a quiet workspace's requests and every
// server's /healthz are timed from outside. They must be served, not
// refused, each within BOUND_MS; the attacks held them 4.6 to 60.9 s before.

/** Generous: an idle request takes milliseconds, and the attacks this suite replays held them for seconds. */
const BOUND_MS = 3_000;

/** Behind a proxy, as the log-in attack needs: its sources are X-Forwarded-For addresses. */
const ENV = { DIDYMA_TRUST_PROXY: '1' };

const TARGETS: Array<[string, (env: Record<string, string>) => Promise<Target>]> = [
  ['didyma dev (one process, embedded PGlite)', devTarget],
  ['separate processes on PostgreSQL and RabbitMQ', separateTarget],
];

for (const [name, start] of TARGETS) {
  describe(`no workspace stalls another: ${name}`, function () {
    this.timeout(300_000);
    let target: Target;
    let noisy: Workspace;
    let quiet: Workspace;
    let predicting: QuietRequest;
    const quietVersion = unique('quiet');

    before(async () => {
      target = await start(ENV);
      [noisy, quiet] = [await workspaceOn(target), await workspaceOn(target)];
      const registered = await registerModel(target, quiet, quietVersion);
      expect(registered.status, registered.text).to.equal(201);
      predicting = await quietPrediction(target, quiet, quietVersion);
    });
    after(() => target?.close());

    /** Runs the attack while the quiet side is timed; every quiet request must be served within BOUND_MS. */
    async function served<R>(attack: Attack<R>, minimumMs?: number): Promise<R> {
      try {
        const run = attack.run();
        const probes: Probe[] = await probeWhile([...quietRequests(target, quiet), predicting, ...attack.quiet], run, minimumMs);
        expect(probes.length, 'probes taken during the attack').to.be.greaterThan(3);
        expect(unserved(probes, BOUND_MS), `${summary(probes)}\n${target.tails()}`).to.deep.equal([]);
        return await run;
      } finally {
        await attack.close();
      }
    }

    it('the event loop: refuses the issue’s costly pattern at registration, naming the field', async () => {
      const reply = await served(costlyRegistration(target, noisy));
      expect(reply.status, reply.text).to.equal(400);
      expect(reply.body.message).to.match(/input_schema/);
    });

    it('the event loop: checks 16,000-character strings against the costliest pattern it admits without stalling anyone', async () => {
      const statuses = await served(await admittedPatternChecks(target, noisy, { count: 16, length: 16_000, concurrency: 4 }));
      for (const status of statuses) expect(status).to.be.oneOf([201, 400, 429]);
    });

    it('validation threads: twelve costly 17 KB checks at once delay only the workspace that sends them', async () => {
      const flood = await admittedPatternChecks(target, noisy, { count: 12, length: 17_000, concurrency: 12 });
      const statuses = await served({ ...flood, quiet: [await quietThreadCheck(target, quiet)] });
      for (const status of statuses) expect(status).to.be.oneOf([201, 400, 429]);
    });

    it('event streams: 256 streams of one user are refused past the cap, and take no slot another tenant needs', async () => {
      const streams = await streamFlood(target, noisy, 256);
      let statuses: number[] = [];
      try {
        statuses = await served({ ...streams, close: async () => undefined }, 3_000);
        // With the noisy streams still open, the quiet side is still served.
        await served({ quiet: [], run: async () => undefined, close: async () => undefined });
      } finally {
        await streams.close();
      }
      expect(statuses.filter((status) => status === 429).length, 'streams refused over the cap').to.be.greaterThan(0);
      expect(statuses.filter((status) => status === 503).length, 'streams refused as a busy server').to.equal(0);
    });

    it('prediction waits: 200 waiting predictions of one workspace hold its own wait slots only, the rest answered at once', async () => {
      const flood = await waitFlood(target, noisy);
      const statuses = await served({ ...flood, quiet: [await quietWaitingPrediction(target, quiet, quietVersion)] });
      expect(statuses.filter((status) => status === 201).length, 'waits past the workspace’s bound, answered at once').to.be.greaterThan(0);
      expect(statuses.filter((status) => ![200, 201, 202].includes(status)), 'refused').to.deep.equal([]);
    });

    it('log-in: wrong passwords from other addresses do not lock the owner out', async () => {
      const statuses = await served(passwordGuesses(target, quiet, 3, 12));
      expect(statuses.filter((status) => status === 429).length, 'guesses refused past their source’s limit').to.be.greaterThan(0);
      const owner = await target.auth.post('/api/auth/token/obtain', { headers: { 'x-forwarded-for': '198.51.100.7' }, json: { email: quiet.userEmail, password: ISOLATION_PASSWORD, workspace: quiet.name } });
      expect(owner.status, owner.text).to.equal(200);
    });

    it('webhook deliveries: a slow receiver of one workspace delays only its own deliveries', async () => {
      const { quietDeliveryMs } = await served(await slowReceiver(target, noisy, quiet, quietVersion));
      expect(quietDeliveryMs, 'the quiet workspace’s delivery (ms)').to.be.below(BOUND_MS);
    });
  });
}
