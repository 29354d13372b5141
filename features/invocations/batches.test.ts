import crypto from 'node:crypto';
import { expect } from 'chai';
import { makeWorkspace, unique, type TestPlatform } from '../../test/support/platform.js';
import { colleague, IRIS, queuedPredict, startIrisPlatform, type IrisPlatform, type Tenant } from '../../test/support/fixtures.js';
import { InvocationBatches } from './batches.js';
import { invocationState } from './state.js';
import { invocationsStore } from './store.js';

describe('invocation batches: appends and reads of concurrent requests in one statement', () => {
  let iris: IrisPlatform;
  let t: TestPlatform;
  let owner: Tenant;
  let other: Tenant;
  let modelId: number;
  const version = unique('v');
  const base = `/api/model/iris-classifier/version/${version}`;

  before(async () => {
    iris = await startIrisPlatform(version);
    ({ t, owner, modelId } = iris);
    other = await colleague(t, owner);
  });
  after(() => iris.close());

  const openSession = async (who: Tenant) => (await t.public.post(`${base}/session`, { token: who.token })).body.id as string;
  const queued = (sessionId: string, who: Tenant, body?: string) => queuedPredict({ workspaceId: owner.ws.id, sessionId, userId: who.user.id, modelId }, body);

  it('appends to many sessions at once: dense orders per session, nothing to a CLOSED or foreign session', async () => {
    const [first, second, closed] = [await openSession(owner), await openSession(owner), await openSession(owner)];
    expect((await t.public.patch(`${base}/session/${closed}?state=CLOSED`, { token: owner.token })).status).to.equal(200);
    const rows = [queued(first, owner), queued(second, owner), queued(first, owner), queued(closed, owner), queued(first, other), queued(second, owner)];
    const out = await invocationState.appendQueued(t.platform.db, rows);
    expect(out.map((row) => row?.id)).to.deep.equal([rows[0]!.id, rows[1]!.id, rows[2]!.id, undefined, undefined, rows[5]!.id]);
    expect(out.map((row) => row?.order)).to.deep.equal([0, 0, 1, undefined, undefined, 1]);
    // A later append continues each session's counter.
    expect((await invocationState.appendQueued(t.platform.db, [queued(first, owner)]))[0]?.order).to.equal(2);
    expect(Number(((await t.platform.db('invocations').where({ session_id: closed }).count('* as n').first()) as { n: unknown }).n)).to.equal(0);
  });

  it("keeps each row to its session's workspace and user, and goes with the session's user", async () => {
    const leaving = await colleague(t, owner);
    const session = await openSession(leaving);
    const [row] = await invocationState.appendQueued(t.platform.db, [queued(session, leaving)]);
    const stored = await t.platform.db('invocations').where({ id: row!.id }).first();
    const copy = (changes: Record<string, unknown>) => t.platform.db('invocations').insert({ ...stored, id: crypto.randomUUID(), order: 100, ...changes });
    // An existing user and workspace, but not the session's.
    for (const changes of [{ user_id: owner.user.id }, { workspace_id: (await makeWorkspace(t.platform)).id }]) {
      const refused = await copy(changes).then(() => undefined, (error: { code?: string }) => error.code);
      expect(refused, JSON.stringify(changes)).to.equal('23503');
    }
    await t.platform.db('users').where({ id: leaving.user.id }).delete();
    expect(await t.platform.db('invocations').where({ id: row!.id }).first()).to.equal(undefined);
  });

  it('reads many (session, invocation) pairs at once, each only for the session owner', async () => {
    const session = await openSession(owner);
    const [row] = await invocationState.appendQueued(t.platform.db, [queued(session, owner)]);
    const key = { sessionId: session, modelId, userId: owner.user.id, id: row!.id };
    const found = await invocationsStore.inSessionsOfUsers(t.platform.db, [key, { ...key, userId: other.user.id }, { ...key, id: crypto.randomUUID() }, key]);
    expect(found.map((entry) => entry && (entry.invocation?.id ?? 'no invocation'))).to.deep.equal([row!.id, undefined, 'no invocation', row!.id]);
    expect(found[0]!.invocation!.created_at).to.be.instanceOf(Date);
  });

  it('fails only the item the database refuses when a batch fails as a whole', async () => {
    const batches = new InvocationBatches(t.platform.db, invocationsStore);
    const session = await openSession(owner);
    // PostgreSQL text cannot hold NUL: this item makes the batched statement fail.
    const outcomes = await Promise.allSettled([batches.append(queued(session, owner)), batches.append(queued(session, owner, '{"a":"\u0000"}')), batches.append(queued(session, owner))]);
    expect(outcomes.map((outcome) => outcome.status)).to.deep.equal(['fulfilled', 'rejected', 'fulfilled']);
    const orders = outcomes.flatMap((outcome) => (outcome.status === 'fulfilled' ? [outcome.value!.order] : []));
    expect(orders).to.have.length(2);
    expect(new Set(orders).size).to.equal(2);
  });

  it('serves concurrent POSTs and GETs through the API with one row per 201 and dense orders', async () => {
    const sessions = [await openSession(owner), await openSession(owner)];
    const posts = await Promise.all(Array.from({ length: 24 }, (_, i) => t.public.post(`${base}/session/${sessions[i % 2]}/invocation`, { token: owner.token, json: { type: 'PREDICT', request: { type: 'FEATURES', body: IRIS } } })));
    expect(posts.map((reply) => reply.status)).to.deep.equal(posts.map(() => 201));
    for (const session of sessions) {
      const orders = posts.filter((reply) => reply.body.request.session_id === session).map((reply) => reply.body.order as number);
      expect([...orders].sort((a, b) => a - b)).to.deep.equal(Array.from({ length: 12 }, (_, i) => i));
    }
    const gets = await Promise.all(posts.map((reply) => t.public.get(`${base}/session/${reply.body.request.session_id}/invocation/${reply.body.id}`, { token: owner.token })));
    expect(gets.map((reply) => reply.body.id)).to.deep.equal(posts.map((reply) => reply.body.id));
    const foreign = await t.public.get(`${base}/session/${sessions[0]}/invocation/${posts[0]!.body.id}`, { token: other.token });
    expect(foreign.status).to.equal(404);
  });
});
