import { expect } from 'chai';
import type { Db } from '../../infra/db/database.js';
import { ownDatabase } from '../../test/support/database.js';
import { unique } from '../../test/support/platform.js';
import { createWorkspace } from '../identity/admin.js';
import { webhookDeliveriesStore, type ClaimCaps } from './deliveries.store.js';
import { webhookEndpointsStore } from './endpoints.store.js';

// The claim of webhook deliveries, against a database of its own: every
// pending delivery in it is one of these tests', so what a claim takes is
// what the fair order gives.

describe('the claim of webhook deliveries', function () {
  this.timeout(60_000);
  let own: Awaited<ReturnType<typeof ownDatabase>>;
  let db: Db;
  before(async () => {
    own = await ownDatabase();
    db = own.db;
  });
  after(() => own?.drop());
  afterEach(() => db('webhook_deliveries').delete());

  const LEASE_MS = 60_000;
  const caps: ClaimCaps = { perWorkspace: 4, perEndpoint: 2 };

  async function workspace(): Promise<number> {
    return (await createWorkspace(db, unique('ws').replace(/[^a-z0-9_-]/g, ''))).id;
  }
  async function endpointOf(workspaceId: number): Promise<number> {
    const row = await webhookEndpointsStore.insertWithin(db, { workspace_id: workspaceId, url: 'https://hooks.example.com/h', description: '', events: ['dataset.exported'], secret_sealed: 'sealed', enabled: true, created_by_id: null }, 100);
    return row!.id;
  }
  /** `count` due deliveries to the endpoint, queued `ageSeconds` ago; their ids in order. */
  async function due(workspaceId: number, endpointId: number, count: number, ageSeconds = 0): Promise<string[]> {
    const rows = Array.from({ length: count }, (_, i) => ({
      workspace_id: workspaceId,
      endpoint_id: endpointId,
      event_type: 'dataset.exported',
      payload: `{"n":${i}}`,
      next_attempt_at: db.raw(`now() - ? * interval '1 second'`, [ageSeconds - i / 1000]),
    }));
    return ((await db('webhook_deliveries').insert(rows).returning('id')) as Array<{ id: string }>).map((row) => row.id);
  }
  const claim = async (limit: number, claimCaps = caps) => (await webhookDeliveriesStore.claimDue(db, limit, LEASE_MS, claimCaps)).map((row) => row.id);
  const countIn = (ids: string[], of: string[]) => ids.filter((id) => of.includes(id)).length;

  it('gives a workspace behind another’s older backlog its turn in the same claim', async () => {
    const noisy = await workspace();
    const quiet = await workspace();
    const backlog = await due(noisy, await endpointOf(noisy), 50, 3600);
    const [waiting] = await due(quiet, await endpointOf(quiet), 1);
    const taken = await claim(2, { perWorkspace: 8, perEndpoint: 8 });
    expect(taken).to.include(waiting);
    expect(countIn(taken, backlog)).to.equal(1);
  });

  it('serves the workspace with the fewest deliveries in flight first', async () => {
    const noisy = await workspace();
    const quiet = await workspace();
    const backlog = await due(noisy, await endpointOf(noisy), 20, 3600);
    await due(noisy, await endpointOf(noisy), 20, 3600);
    expect(await claim(3), 'noisy alone').to.have.length(3);
    const quietEndpoint = await endpointOf(quiet);
    const waiting = [...(await due(quiet, quietEndpoint, 1, 30)), ...(await due(quiet, await endpointOf(quiet), 1, 20))];
    await due(quiet, quietEndpoint, 1, 10);
    // Quiet's k-th next has 0 + k in flight, noisy's 3 + k: quiet's two go ahead of noisy's older ones.
    const taken = await claim(2);
    expect(taken.sort()).to.deep.equal([...waiting].sort());
    expect(countIn(taken, backlog)).to.equal(0);
  });

  it('holds a workspace to its cap across claims, and gives a slot back when an attempt ends', async () => {
    const noisy = await workspace();
    await due(noisy, await endpointOf(noisy), 10, 60);
    await due(noisy, await endpointOf(noisy), 10, 60);
    const first = await claim(10);
    expect(first, 'the cap of one workspace').to.have.length(caps.perWorkspace);
    expect(await claim(10), 'another process’s claim').to.deep.equal([]);
    await webhookDeliveriesStore.finish(db, { id: first[0]!, attempts: 1 }, { attempt: { started_at: new Date(), duration_ms: 1, status_code: 200, error: null, response: null }, status: 'delivered' });
    expect(await claim(10)).to.have.length(1);
  });

  it('holds an endpoint to its cap and looks past it to the workspace’s other endpoints', async () => {
    const ws = await workspace();
    const slowBacklog = await due(ws, await endpointOf(ws), 30, 3600);
    const [other] = await due(ws, await endpointOf(ws), 1);
    const taken = await claim(10);
    expect(countIn(taken, slowBacklog)).to.equal(caps.perEndpoint);
    expect(taken).to.include(other);
  });

  it('never passes a workspace’s cap when several processes claim at once', async () => {
    const noisy = await workspace();
    for (let i = 0; i < 4; i++) await due(noisy, await endpointOf(noisy), 10, 60);
    const claims = await Promise.all(Array.from({ length: 6 }, () => claim(10)));
    expect(claims.flat()).to.have.length(caps.perWorkspace);
  });

  it('registers endpoints up to the maximum only, however many registrations race for the last places', async () => {
    const ws = await workspace();
    const row = { workspace_id: ws, url: 'https://hooks.example.com/h', description: '', events: ['dataset.exported' as const], secret_sealed: 'sealed', enabled: true, created_by_id: null };
    const results = await Promise.all(Array.from({ length: 8 }, () => webhookEndpointsStore.insertWithin(db, row, 5)));
    expect(results.filter(Boolean)).to.have.length(5);
    expect(await webhookEndpointsStore.insertWithin(db, row, 6), 'a higher maximum has room').to.not.equal(undefined);
    expect(await webhookEndpointsStore.insertWithin(db, row, 3), 'a lower one keeps them all and takes none').to.equal(undefined);
    expect(Number((await db('webhook_endpoints').where({ workspace_id: ws }).count({ n: '*' }))[0]!.n)).to.equal(6);
  });
});
