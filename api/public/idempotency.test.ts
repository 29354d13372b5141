import { expect } from 'chai';
import crypto from 'node:crypto';
import { login, makeWorkspace, startTestPlatform, unique, type TestPlatform } from '../../test/support/platform.js';
import { colleague, filesystemStorage, IRIS, registeredIris, startDemoModelServer, tenant, type Tenant } from '../../test/support/fixtures.js';
import type { DemoModelServer } from '../../demo/model-server/server.js';
import { IdempotencyService, DEFAULT_IDEMPOTENCY_OPTIONS } from '../../features/idempotency/service.js';
import { idempotencyStore, type KeyScope } from '../../features/idempotency/store.js';
import { until } from '../../test/support/until.js';
import { IdempotencyKeyInFlightError, IdempotencyKeyReusedError } from '../../kernel/errors/errors.js';

const HOUR = 3_600_000;

describe('public server: Idempotency-Key on the POSTs that create work', () => {
  let t: TestPlatform;
  let demo: DemoModelServer & { url: string };
  let version: string;
  let owner: Tenant;
  // The platform's clock: moved on to see keys expire.
  let offset = 0;

  before(async () => {
    t = await startTestPlatform({}, () => Date.now() + offset);
    version = unique('v');
    demo = await startDemoModelServer(version);
    owner = await tenant(t);
    await registeredIris(t, owner, demo.url, version);
  });
  after(async () => {
    await demo.close();
    await t.close();
  });

  const base = () => `/api/model/iris-classifier/version/${version}`;
  const predict = (body = IRIS) => ({ type: 'PREDICT', request: { type: 'FEATURES', body } });

  async function openSession(who: Tenant) {
    const reply = await t.public.post(`${base()}/session`, { token: who.token });
    expect(reply.status, reply.text).to.equal(201);
    return reply.body.id as string;
  }

  const invoke = (who: Tenant, session: string, key: string | undefined, json: unknown = predict()) =>
    t.public.post(`${base()}/session/${session}/invocation`, { token: who.token, json, headers: key === undefined ? {} : { 'idempotency-key': key } });

  const storedKeys = async (keys: string[]) => Number(((await t.platform.db('idempotency_keys').whereIn('key', keys).count({ n: '*' })) as Array<{ n: number }>)[0]!.n);

  /** The answer goes out before its key is freed: wait for the release (a retry meanwhile waits for it too). */
  const noneStored = (keys: string[]) => until(async () => (await storedKeys(keys)) === 0, 'the keys of the failed requests freed');

  const invocationsOf = async (session: string) => Number(((await t.platform.db('invocations').where({ session_id: session }).count({ n: '*' })) as Array<{ n: number }>)[0]!.n);

  it('queues one invocation for a POST sent 100 times at once with one key; every reply carries its id', async () => {
    const session = await openSession(owner);
    const key = crypto.randomUUID();
    const replies = await Promise.all(Array.from({ length: 100 }, () => invoke(owner, session, key)));
    expect(replies.map((r) => r.status)).to.deep.equal(Array(100).fill(201), replies.find((r) => r.status !== 201)?.text);
    expect(new Set(replies.map((r) => r.body.id)).size).to.equal(1);
    expect(replies.filter((r) => r.headers.get('idempotent-replayed') === 'true')).to.have.length(99);
    expect(await invocationsOf(session)).to.equal(1);
  });

  it('answers a retry after completion with the first status and body, marked as replayed', async () => {
    const session = await openSession(owner);
    const key = 'retry-after-completion';
    const first = await invoke(owner, session, key);
    expect(first.status).to.equal(201);
    expect(first.headers.get('idempotent-replayed')).to.equal(null);
    // The same body with its keys in another order is the same request.
    const again = await invoke(owner, session, key, { request: { body: IRIS, type: 'FEATURES' }, type: 'PREDICT' });
    expect(again.status).to.equal(201);
    expect(again.text).to.equal(first.text);
    expect(again.headers.get('idempotent-replayed')).to.equal('true');
    // Without a key, the same POST queues another.
    expect((await invoke(owner, session, undefined)).status).to.equal(201);
    expect(await invocationsOf(session)).to.equal(2);
  });

  it('refuses the same key with another body: 422, nothing queued', async () => {
    const session = await openSession(owner);
    const key = crypto.randomUUID();
    expect((await invoke(owner, session, key)).status).to.equal(201);
    const other = await invoke(owner, session, key, predict(JSON.stringify({ sepal_length: 6, sepal_width: 3, petal_length: 4, petal_width: 1 })));
    expect(other.status).to.equal(422);
    expect(other.body).to.include({ message_code: 'idempotency_key_reused' });
    // Another path (another session) with the key is another request too.
    const elsewhere = await invoke(owner, await openSession(owner), key);
    expect(elsewhere.status).to.equal(422);
    expect(await invocationsOf(session)).to.equal(1);
  });

  it('keeps the keys of another user, another workspace and an API token apart', async () => {
    const key = 'shared-key';
    const session = await openSession(owner);
    const first = await invoke(owner, session, key);
    const mate = await colleague(t, owner);
    const mateSession = await openSession(mate);
    const theirs = await invoke(mate, mateSession, key);
    expect(theirs.status).to.equal(201);
    expect(theirs.headers.get('idempotent-replayed')).to.equal(null);
    expect(theirs.body.id).to.not.equal(first.body.id);

    // An API token of the same user is a principal of its own.
    const principal = await t.platform.authenticator.authenticate(owner.token);
    const { key: apiToken } = await t.platform.identity.apiTokens.create(principal, owner.ws.id, { name: unique('token'), expiration_date: '2999-12-31' });
    const byToken = await invoke({ ...owner, token: apiToken }, session, key);
    expect(byToken.status).to.equal(201);
    expect(byToken.body.id).to.not.equal(first.body.id);
    expect(await invocationsOf(session)).to.equal(2);

    // The same user in another workspace, with a model of that workspace.
    const elsewhereVersion = unique('v');
    const elsewhereDemo = await startDemoModelServer(elsewhereVersion);
    try {
      const ws = await makeWorkspace(t.platform, [[owner.user, 'supervisor']]);
      const there: Tenant = { user: owner.user, ws, token: (await login(t.auth, owner.user, ws.name)).access };
      await registeredIris(t, there, elsewhereDemo.url, elsewhereVersion);
      const path = `/api/model/iris-classifier/version/${elsewhereVersion}/session`;
      const opened = await t.public.post(path, { token: there.token });
      const queued = await t.public.post(`${path}/${opened.body.id}/invocation`, { token: there.token, json: predict(), headers: { 'idempotency-key': key } });
      expect(queued.status, queued.text).to.equal(201);
      expect(queued.headers.get('idempotent-replayed')).to.equal(null);
      expect(await invocationsOf(opened.body.id as string)).to.equal(1);
    } finally {
      await elsewhereDemo.close();
    }
  });

  it('refuses a malformed key with a 400 naming the header', async () => {
    const session = await openSession(owner);
    for (const key of ['x'.repeat(256), 'clé', '']) {
      const reply = await invoke(owner, session, key);
      expect(reply.status, JSON.stringify(key)).to.equal(400);
      expect(reply.body.message_code).to.equal('validation_error');
      expect(reply.body.details[0].field).to.equal('Idempotency-Key');
    }
    expect((await invoke(owner, session, 'x'.repeat(255))).status).to.equal(201);
    expect(await invocationsOf(session)).to.equal(1);
  });

  it('frees the key when the first attempt fails with a 5xx, so a retry runs', async () => {
    const session = await openSession(owner);
    const key = crypto.randomUUID();
    const service = t.platform.services.invocations;
    const invokeOnce = service.invoke.bind(service);
    service.invoke = () => Promise.reject(new Error('the first attempt fails'));
    try {
      expect((await invoke(owner, session, key)).status).to.equal(500);
    } finally {
      service.invoke = invokeOnce;
    }
    const retry = await invoke(owner, session, key);
    expect(retry.status).to.equal(201);
    expect(retry.headers.get('idempotent-replayed')).to.equal(null);
    expect(await invocationsOf(session)).to.equal(1);
  });

  it('holds the key of a request whose client went away: the retry gets its answer, and the work runs once', async () => {
    const session = await openSession(owner);
    const key = crypto.randomUUID();
    const service = t.platform.services.invocations;
    const invokeOnce = service.invoke.bind(service);
    let arrived!: () => void;
    const running = new Promise<void>((resolve) => (arrived = resolve));
    let answer!: () => void;
    const held = new Promise<void>((resolve) => (answer = resolve));
    service.invoke = async (...args) => {
      arrived();
      await held;
      return invokeOnce(...args);
    };
    try {
      const gone = new AbortController();
      const sent = fetch(`${t.public.baseUrl}${base()}/session/${session}/invocation`, {
        method: 'POST',
        headers: { authorization: `Bearer ${owner.token}`, 'content-type': 'application/json', 'idempotency-key': key },
        body: JSON.stringify(predict()),
        signal: gone.signal,
      }).catch(() => undefined);
      await running;
      gone.abort();
      await sent;
      // The work still runs after the client left: its retry must wait for it, not run it again.
      const retry = invoke(owner, session, key);
      answer();
      const replayed = await retry;
      expect(replayed.status, replayed.text).to.equal(201);
      expect(replayed.headers.get('idempotent-replayed')).to.equal('true');
      expect(await invocationsOf(session)).to.equal(1);
    } finally {
      answer();
      service.invoke = invokeOnce;
    }
  });

  it('frees the key of a client error: once the session is open again, the retry runs', async () => {
    const session = await openSession(owner);
    expect((await t.public.patch(`${base()}/session/${session}?state=CLOSED`, { token: owner.token })).status).to.equal(200);
    const key = crypto.randomUUID();
    const closed = await invoke(owner, session, key);
    expect(closed.status).to.equal(409);
    await noneStored([key]);
    expect((await t.public.patch(`${base()}/session/${session}?state=OPEN`, { token: owner.token })).status).to.equal(200);
    const again = await invoke(owner, session, key);
    expect(again.status, again.text).to.equal(201);
    expect(again.headers.get('idempotent-replayed')).to.equal(null);
    expect(await invocationsOf(session)).to.equal(1);
  });

  it('stores no key of the many sent with requests that fail, while a 201 still replays', async () => {
    const session = await openSession(owner);
    const keys = Array.from({ length: 200 }, () => crypto.randomUUID());
    const missing = `${base()}/session/${crypto.randomUUID()}/invocation`;
    for (let sent = 0; sent < keys.length; sent += 20) {
      const replies = await Promise.all(keys.slice(sent, sent + 20).map((key) => t.public.post(missing, { token: owner.token, json: predict(), headers: { 'idempotency-key': key } })));
      expect(replies.map((reply) => reply.status)).to.deep.equal(Array(replies.length).fill(404));
    }
    await noneStored(keys);
    const created = await invoke(owner, session, keys[0]);
    expect(created.status).to.equal(201);
    await until(async () => (await storedKeys(keys)) === 1, 'the created request’s key stored');
    const replayed = await invoke(owner, session, keys[0]);
    expect(replayed.headers.get('idempotent-replayed')).to.equal('true');
    expect(replayed.body.id).to.equal(created.body.id);
    expect(await invocationsOf(session)).to.equal(1);
  });

  it('lets every concurrent retry of a failing request run and free the key, and runs the work once when they succeed', async () => {
    const session = await openSession(owner);
    const key = crypto.randomUUID();
    expect((await t.public.patch(`${base()}/session/${session}?state=CLOSED`, { token: owner.token })).status).to.equal(200);
    const refused = await Promise.all(Array.from({ length: 10 }, () => invoke(owner, session, key)));
    expect(refused.map((reply) => reply.status)).to.deep.equal(Array(10).fill(409));
    expect(refused.filter((reply) => reply.headers.get('idempotent-replayed') === 'true')).to.have.length(0);
    await noneStored([key]);
    expect((await t.public.patch(`${base()}/session/${session}?state=OPEN`, { token: owner.token })).status).to.equal(200);
    const created = await Promise.all(Array.from({ length: 10 }, () => invoke(owner, session, key)));
    expect(created.map((reply) => reply.status)).to.deep.equal(Array(10).fill(201));
    expect(new Set(created.map((reply) => reply.body.id)).size).to.equal(1);
    expect(await invocationsOf(session)).to.equal(1);
  });

  it('opens one session and exports one dataset version per key', async () => {
    const key = crypto.randomUUID();
    const sessions = await Promise.all([1, 2, 3].map(() => t.public.post(`${base()}/session`, { token: owner.token, headers: { 'idempotency-key': key } })));
    expect(new Set(sessions.map((s) => s.body.id)).size).to.equal(1);
    const session = sessions[0]!.body.id as string;
    expect((await t.public.patch(`${base()}/session/${session}?state=CLOSED`, { token: owner.token })).status).to.equal(200);
    const storage = await filesystemStorage(t.private, owner.token);
    const exportIt = () => t.public.post(`${base()}/session/${session}/dataset`, { token: owner.token, json: { storage_key: storage }, headers: { 'idempotency-key': key } });
    const first = await exportIt();
    expect(first.status, first.text).to.equal(201);
    const second = await exportIt();
    expect(second.body).to.deep.equal(first.body);
    expect(second.headers.get('idempotent-replayed')).to.equal('true');
  });

  it('forgets a key after the retention: the same key then runs a new request', async () => {
    const session = await openSession(owner);
    const key = crypto.randomUUID();
    expect((await invoke(owner, session, key)).status).to.equal(201);
    offset = 25 * HOUR;
    try {
      const fresh = { ...owner, token: (await login(t.auth, owner.user, owner.ws.name)).access };
      const later = await invoke(fresh, session, key, predict(JSON.stringify({ sepal_length: 7, sepal_width: 3, petal_length: 5, petal_width: 2 })));
      expect(later.status, later.text).to.equal(201);
      expect(later.headers.get('idempotent-replayed')).to.equal(null);
      expect(await invocationsOf(session)).to.equal(2);
      // The purge deletes every key past its retention, this one's first use among them.
      offset = 50 * HOUR;
      expect(await t.platform.services.idempotency.purgeExpired()).to.be.at.least(1);
      expect(await t.platform.db('idempotency_keys').where({ workspace_id: owner.ws.id, key }).count({ n: '*' })).to.deep.equal([{ n: 0 }]);
    } finally {
      offset = 0;
    }
  });

  describe('the service', () => {
    const scope = (key: string): KeyScope => ({ workspaceId: owner.ws.id, principal: `user-${owner.user.id}`, operation: 'test', key });
    const service = (options: Partial<typeof DEFAULT_IDEMPOTENCY_OPTIONS>) => new IdempotencyService(t.platform.db, idempotencyStore, { ...DEFAULT_IDEMPOTENCY_OPTIONS, retentionMs: HOUR, ...options });

    it('answers 409 to a duplicate while the first still runs past the wait, then the first answer', async () => {
      const keys = service({ waitMs: 100 });
      const key = scope(crypto.randomUUID());
      const { claim } = await keys.begin(key, 'hash');
      let error: unknown;
      await keys.begin(key, 'hash').catch((e: unknown) => (error = e));
      expect(error).to.be.instanceOf(IdempotencyKeyInFlightError);
      expect((error as IdempotencyKeyInFlightError).status).to.equal(409);
      await keys.begin(key, 'other').catch((e: unknown) => (error = e));
      expect(error).to.be.instanceOf(IdempotencyKeyReusedError);
      const waiting = keys.begin(key, 'hash');
      await claim!.finish({ status: 201, body: '{"id":"a"}' });
      expect(await waiting).to.deep.equal({ replay: { status: 201, body: '{"id":"a"}' } });
    });

    it('lets a retry take over a claim whose holder stopped renewing its lease', async () => {
      const keys = service({ leaseMs: 50, maxHoldMs: 0 });
      const key = scope(crypto.randomUUID());
      const first = await keys.begin(key, 'hash');
      expect(first.claim).to.not.equal(undefined);
      const second = await keys.begin(key, 'hash');
      expect(second.claim, 'the lapsed claim is taken over').to.not.equal(undefined);
      await second.claim!.finish({ status: 201, body: '{}' });
      // The first holder's late answer no longer counts.
      await first.claim!.finish({ status: 201, body: '{"late":true}' });
      expect(await keys.begin(key, 'hash')).to.deep.equal({ replay: { status: 201, body: '{}' } });
    });

    it('stores an answer once the database is back, so a retry past the lease gets it rather than running again', async () => {
      // The database goes away after the work and before its answer is stored: the store's writes fail for a while, as they do then.
      let downUntil = 0;
      const unavailable = () => Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
      const down = <A extends unknown[], R>(write: (...args: A) => Promise<R>) => async (...args: A) => {
        if (Date.now() < downUntil) throw unavailable();
        return write(...args);
      };
      const store = { ...idempotencyStore, complete: down(idempotencyStore.complete), renew: down(idempotencyStore.renew), release: down(idempotencyStore.release) };
      const keys = new IdempotencyService(t.platform.db, store, { ...DEFAULT_IDEMPOTENCY_OPTIONS, retentionMs: HOUR, leaseMs: 300 });
      const key = scope(crypto.randomUUID());
      const { claim } = await keys.begin(key, 'hash');
      downUntil = Date.now() + 600; // longer than the lease
      await claim!.finish({ status: 201, body: '{"id":"a"}' });
      expect(Date.now(), 'stored once the database was back').to.be.at.least(downUntil);
      await new Promise((resolve) => setTimeout(resolve, 400)); // past the lease of a claim no longer renewed
      expect(await keys.begin(key, 'hash')).to.deep.equal({ replay: { status: 201, body: '{"id":"a"}' } });
    });
  });
});
