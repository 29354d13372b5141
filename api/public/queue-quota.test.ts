import { expect } from 'chai';
import { createDatabase, type Db } from '../../infra/db/database.js';
import { sharedDatabaseUrl, usingPostgres } from '../../test/support/database.js';
import { IRIS, registeredIris, startDemoModelServer, tenant, type Tenant } from '../../test/support/fixtures.js';
import { makeStaff, startTestPlatform, unique, type TestPlatform } from '../../test/support/platform.js';

// No executor runs here, so whatever a POST queues stays QUEUED: the count is the append's alone.
describe('max_queued across replicas: concurrent appends never pass it', function () {
  this.timeout(120_000);
  const MAX_QUEUED = 5;
  let servers: TestPlatform[];
  let replicaDb: Db | undefined;
  let demo: Awaited<ReturnType<typeof startDemoModelServer>>;
  let owner: Tenant;
  let staffToken: string;
  let path: string;

  before(async () => {
    const first = await startTestPlatform();
    // On PostgreSQL, a second public server with its own pool, as a replica has; PGlite is one process's database.
    if (usingPostgres()) {
      replicaDb = createDatabase({ url: await sharedDatabaseUrl(), poolMax: 10 });
      servers = [first, await startTestPlatform({}, undefined, { db: replicaDb })];
    } else {
      servers = [first];
    }
    const version = unique('v');
    demo = await startDemoModelServer(version);
    owner = await tenant(first);
    await registeredIris(first, owner, demo.url, version);
    staffToken = (await makeStaff(first)).token;
    const quota = await first.auth.patch(`/api/auth/workspace/${owner.ws.id}/quota`, { token: staffToken, json: { max_queued: MAX_QUEUED } });
    expect(quota.status, quota.text).to.equal(200);
    path = `/api/model/iris-classifier/version/${version}`;
  });

  after(async () => {
    for (const t of servers ?? []) await t.close();
    await replicaDb?.destroy();
    await demo?.close();
  });

  const openSession = async () => (await servers[0]!.public.post(`${path}/session`, { token: owner.token })).body.id as string;

  /** `count` POSTs at once, spread over every public server, each to one of `sessions`: their statuses. */
  const burst = async (count: number, sessions: string[]) =>
    Promise.all(
      Array.from({ length: count }, async (_, i) => {
        const server = servers[i % servers.length]!;
        const reply = await server.public.post(`${path}/session/${sessions[i % sessions.length]}/invocation`, {
          token: owner.token,
          json: { type: 'PREDICT', request: { type: 'FEATURES', body: IRIS } },
        });
        if (reply.status === 429) expect(Number(reply.headers.get('retry-after'))).to.be.greaterThan(0);
        return reply.status;
      }),
    );

  const queued = async () => Number(((await servers[0]!.platform.db('invocations').where({ workspace_id: owner.ws.id, status: 'QUEUED' }).count({ n: '*' })) as Array<{ n: string | number }>)[0]!.n);

  it('accepts exactly max_queued of many concurrent POSTs on every server, and refuses the rest with 429', async () => {
    const sessions = [await openSession(), await openSession(), await openSession()];
    for (let round = 0; round < 3; round++) {
      const statuses = await burst(40, sessions);
      const accepted = statuses.filter((status) => status === 201).length;
      expect(statuses.filter((status) => status !== 201 && status !== 429), `round ${round}`).to.deep.equal([]);
      expect(accepted, `round ${round}: accepted`).to.equal(round === 0 ? MAX_QUEUED : 2);
      expect(await queued(), `round ${round}: queued`).to.equal(MAX_QUEUED);
      // Two leave the queue (cancelled), so the next burst has room for exactly two.
      const [a, b] = (await servers[0]!.platform.db('invocations').where({ workspace_id: owner.ws.id, status: 'QUEUED' }).select('id', 'session_id').limit(2)) as Array<{ id: string; session_id: string }>;
      for (const row of [a!, b!]) {
        const cancelled = await servers[0]!.public.post(`${path}/session/${row.session_id}/invocation/${row.id}/cancel`, { token: owner.token });
        expect(cancelled.status, cancelled.text).to.equal(200);
      }
    }
  });

  it('counts a re-run against max_queued like a new invocation', async () => {
    const [session] = [await openSession()];
    await servers[0]!.platform.db('invocations').where({ workspace_id: owner.ws.id, status: 'QUEUED' }).delete();
    expect((await burst(MAX_QUEUED, [session!])).every((status) => status === 201)).to.equal(true);
    const [row] = (await servers[0]!.platform.db('invocations').where({ workspace_id: owner.ws.id, status: 'QUEUED' }).select('id').limit(1)) as Array<{ id: string }>;
    expect((await servers[0]!.public.post(`${path}/session/${session}/invocation/${row!.id}/cancel`, { token: owner.token })).status).to.equal(200);
    expect((await burst(1, [session!]))[0]).to.equal(201);
    const refused = await servers[0]!.public.post(`${path}/session/${session}/invocation/${row!.id}/retry`, { token: owner.token });
    expect(refused.status, refused.text).to.equal(429);
    expect(refused.body.message).to.include('max_queued');
    expect(await queued()).to.equal(MAX_QUEUED);
  });
});
