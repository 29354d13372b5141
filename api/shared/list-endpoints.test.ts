import { expect } from 'chai';
import { startTestPlatform, unique, type TestPlatform } from '../../test/support/platform.js';
import { demoDeployment, filesystemStorage, queuedPredict, registeredIris, startDemoModelServer, tenant, type Tenant } from '../../test/support/fixtures.js';
import type { Client, Reply } from '../../test/support/http.js';
import type { DemoModelServer } from '../../demo/model-server/server.js';
import { invocationState } from '../../features/invocations/state.js';
import type { ModelRow } from '../../features/models/store.js';

// Every list endpoint of the three servers, checked the same way: newest
// first, `limit` / `offset` / `after`, the `Link` and `X-Total-Count` headers,
// the creation window, its own filters, 400 for what it does not know, and
// pages that never hold another tenant's rows.

interface Owner extends Tenant {
  /** The list's path for this owner. */
  path: string;
  /** What a seed of this owner hangs on (a model, a session). */
  context: Record<string, unknown>;
}

interface ListCase {
  name: string;
  client: (t: TestPlatform) => Client;
  owner: (t: TestPlatform) => Promise<Owner>;
  /** Creates one row for the owner, returns its key as the list shows it. */
  seed: (t: TestPlatform, owner: Owner) => Promise<string>;
  key: (item: any) => string;
  /** A cursor that names a row of another kind of list (uuid for integer ids and back). */
  foreignCursor: string;
  /** The list's own filters: a query, and the keys of the owner's seeded rows it must select. */
  filters?: (t: TestPlatform, owner: Owner, seeded: string[]) => Promise<Array<{ query: string; expected: string[] }>>;
}

const cursorOf = (at: string, id: string | number) => Buffer.from(JSON.stringify([at, id])).toString('base64url');
const INTEGER_CURSOR = cursorOf('2026-01-01T00:00:00.000000Z', 1);
const UUID_CURSOR = cursorOf('2026-01-01T00:00:00.000000Z', '00000000-0000-4000-8000-000000000000');
const tomorrow = () => new Date(Date.now() + 86400_000).toISOString().slice(0, 10);

let demo: DemoModelServer & { url: string };
const versionedDemos: Array<DemoModelServer & { url: string }> = [];

/** A tenant with its own iris classifier (a fresh version: pairs are unique forever). */
async function irisOwner(t: TestPlatform): Promise<Tenant & { version: string; modelId: number }> {
  const who = await tenant(t);
  const version = unique('v');
  const server = await startDemoModelServer(version);
  versionedDemos.push(server);
  return { ...who, version, modelId: await registeredIris(t, who, server.url, version) };
}

async function modelOwner(t: TestPlatform): Promise<Owner> {
  const { version: _version, modelId, ...who } = await irisOwner(t);
  return { ...who, path: '/api/model', context: { modelId } };
}

/** Another version of the owner's registered model, as a row: the list is under test here, not registration. */
async function seedModel(t: TestPlatform, owner: Owner): Promise<string> {
  const { id: _id, created_at: _created, deleted_at: _deleted, explains_id: _explains, ...model } = (await t.platform.db<ModelRow>('models').where({ id: owner.context.modelId as number }).first())!;
  const version = unique('s');
  const json = (value: unknown) => JSON.stringify(value);
  await t.platform.db('models').insert({ ...model, model_code: 'seeded', version, input_schema: json(model.input_schema), output_schema: json(model.output_schema), native_metadata: json(model.native_metadata), feedback_schema: null });
  return `seeded:${version}`;
}

async function sessionOwner(t: TestPlatform): Promise<Owner> {
  const { version, modelId, ...who } = await irisOwner(t);
  return { ...who, path: `/api/model/iris-classifier/version/${version}/session`, context: { modelId, version } };
}

async function invocationOwner(t: TestPlatform): Promise<Owner> {
  const owner = await sessionOwner(t);
  const sessionId = (await t.public.post(owner.path, { token: owner.token })).body.id as string;
  return { ...owner, path: `${owner.path}/${sessionId}/invocation`, context: { ...owner.context, sessionId } };
}

const CASES: ListCase[] = [
  {
    name: 'GET /api/model',
    client: (t) => t.public,
    owner: modelOwner,
    seed: seedModel,
    key: (item) => `${item.model_metadata.model_code}:${item.model_metadata.version}`,
    foreignCursor: UUID_CURSOR,
    filters: async (_t, _owner, seeded) => [{ query: 'model_code=seeded', expected: seeded }],
  },
  {
    name: 'GET …/session',
    client: (t) => t.public,
    owner: sessionOwner,
    seed: async (t, owner) => (await t.public.post(owner.path, { token: owner.token })).body.id,
    key: (item) => item.id,
    foreignCursor: INTEGER_CURSOR,
    filters: async (t, owner, seeded) => {
      const closed = seeded.slice(0, 2);
      for (const id of closed) expect((await t.public.patch(`${owner.path}/${id}?state=CLOSED`, { token: owner.token })).status).to.equal(200);
      return [
        { query: 'state=CLOSED', expected: closed },
        { query: 'state=OPEN', expected: seeded.slice(2) },
      ];
    },
  },
  {
    name: 'GET …/invocation',
    client: (t) => t.public,
    owner: invocationOwner,
    seed: async (t, owner) => {
      const to = { workspaceId: owner.ws.id, sessionId: owner.context.sessionId as string, userId: owner.user.id, modelId: owner.context.modelId as number };
      return (await invocationState.appendQueued(t.platform.db, [queuedPredict(to)]))[0]!.id;
    },
    key: (item) => item.id,
    foreignCursor: INTEGER_CURSOR,
    filters: async (t, owner, seeded) => {
      const feedbackOn = async (id: string) => {
        const reply = await t.public.post(`${owner.path}/${id}/feedback`, { token: owner.token, json: { request: { body: '{"correct":true}' } } });
        expect(reply.status, reply.text).to.equal(201);
        return reply.body.id as string;
      };
      const [feedback, second] = [await feedbackOn(seeded[0]!), await feedbackOn(seeded[1]!)];
      return [
        { query: 'type=DATA_SUBMISSION', expected: [feedback, second] },
        { query: 'status=COMPLETED', expected: [feedback, second] },
        { query: 'status=QUEUED&type=PREDICT', expected: seeded },
        { query: `related_to=${seeded[0]}`, expected: [feedback] },
        { query: `related_to=${seeded[0]!.toUpperCase()},${seeded[1]}&type=DATA_SUBMISSION`, expected: [feedback, second] },
        { query: `related_to=${feedback}`, expected: [] },
      ];
    },
  },
  {
    name: 'GET /api/deployment',
    client: (t) => t.private,
    owner: async (t) => ({ ...(await tenant(t)), path: '/api/deployment', context: {} }),
    seed: async (t, owner) => demoDeployment(t.private, owner.token, demo.url),
    key: (item) => item.deployment_key,
    foreignCursor: UUID_CURSOR,
  },
  {
    name: 'GET /api/storage',
    client: (t) => t.private,
    owner: async (t) => ({ ...(await tenant(t)), path: '/api/storage', context: {} }),
    seed: async (t, owner) => filesystemStorage(t.private, owner.token),
    key: (item) => item.storage_key,
    foreignCursor: UUID_CURSOR,
  },
  {
    name: 'GET /api/auth/workspace',
    client: (t) => t.auth,
    owner: async (t) => ({ ...(await tenant(t, 'user')), path: '/api/auth/workspace', context: {} }),
    seed: async (t, owner) => {
      const name = unique('ws');
      const [row] = await t.platform.db('workspaces').insert({ name, disabled: false }).returning('id');
      await t.platform.db('memberships').insert({ user_id: owner.user.id, workspace_id: (row as { id: number }).id, role: 'user' });
      return name;
    },
    key: (item) => item.name,
    foreignCursor: UUID_CURSOR,
  },
  {
    name: 'GET /api/auth/workspace/{workspaceId}/token',
    client: (t) => t.auth,
    owner: async (t) => {
      const who = await tenant(t);
      return { ...who, path: `/api/auth/workspace/${who.ws.id}/token`, context: {} };
    },
    seed: async (t, owner) => {
      const principal = await t.platform.authenticator.authenticate(owner.token);
      return String((await t.platform.identity.apiTokens.create(principal, owner.ws.id, { name: unique('ci'), expiration_date: tomorrow() })).token.id);
    },
    key: (item) => String(item.id),
    foreignCursor: UUID_CURSOR,
  },
  {
    name: 'GET /api/auth/invitation',
    client: (t) => t.auth,
    owner: async (t) => ({ ...(await tenant(t)), path: '/api/auth/invitation', context: {} }),
    seed: async (t, owner) => {
      const reply = await t.auth.post('/api/auth/invitation', { token: owner.token, json: { email: `${unique('guest')}@example.test`, role: 'user' } });
      expect(reply.status, reply.text).to.equal(201);
      return String(reply.body.id);
    },
    key: (item) => String(item.id),
    foreignCursor: UUID_CURSOR,
  },
];

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const nextOf = (reply: Reply) => /^<([^>]+)>; rel="next"$/.exec(reply.headers.get('link') ?? '')?.[1];
const withQuery = (path: string, query: string) => `${path}${path.includes('?') ? '&' : '?'}${query}`;

describe('list endpoints: newest first, keyset pages, counts, filters, tenants', () => {
  let t: TestPlatform;

  before(async () => {
    t = await startTestPlatform({ exposeTokenApi: true });
    demo = await startDemoModelServer();
  });
  after(async () => {
    await Promise.all([demo, ...versionedDemos].map((server) => server.close()));
    await t.close();
  });

  const databaseNow = async () => ((await t.platform.db.raw(`select to_char(clock_timestamp() at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as now`)).rows[0] as { now: string }).now;

  it('keeps X-Total-Count exact as models are registered and deleted', async () => {
    const owner = await modelOwner(t);
    const total = async () => Number((await t.public.get('/api/model', { token: owner.token })).headers.get('x-total-count'));
    expect(await total()).to.equal(1);
    const seeded = await seedModel(t, owner);
    expect(await total()).to.equal(2);
    const [code, version] = seeded.split(':');
    expect((await t.private.delete(`/api/platform_model/${code}/version/${version}`, { token: owner.token })).status).to.equal(204);
    expect(await total()).to.equal(1);
    await t.platform.db('models').where({ model_code: code, version }).delete();
    expect(await total(), 'a deleted row was no longer counted').to.equal(1);
  });

  for (const list of CASES) {
    describe(list.name, () => {
      let owner: Owner;
      let other: Owner;
      let seeded: string[]; // in creation order
      let boundary: string;
      let existing: string[]; // rows the list had before the seeds (a registered model, a workspace)
      const get = (who: Owner, query = '') => list.client(t).get(query ? withQuery(who.path, query) : who.path, { token: who.token });
      const keys = (reply: Reply) => (reply.body as unknown[]).map(list.key);

      before(async () => {
        [owner, other] = [await list.owner(t), await list.owner(t)];
        existing = keys(await get(owner, 'limit=1000'));
        seeded = [];
        for (let i = 0; i < 3; i++) seeded.push(await list.seed(t, owner));
        // Clear of the rows on either side: the embedded database's clock moves by the millisecond.
        await pause(5);
        boundary = await databaseNow();
        await pause(5);
        for (let i = 0; i < 2; i++) seeded.push(await list.seed(t, owner));
        for (let i = 0; i < 2; i++) await list.seed(t, other);
      });

      it('lists the caller\'s rows newest first and counts them in X-Total-Count', async () => {
        const all = await get(owner, 'limit=1000');
        expect(all.status, all.text).to.equal(200);
        expect(keys(all)).to.deep.equal([...[...seeded].reverse(), ...existing]);
        expect(all.headers.get('x-total-count')).to.equal(String(seeded.length + existing.length));
        expect(all.headers.get('link'), 'no next page after the last').to.equal(null);
      });

      it('walks every page through the Link header\'s cursor, never another tenant\'s rows', async () => {
        const walked: string[] = [];
        let path: string | undefined = withQuery(owner.path, 'limit=2');
        let pages = 0;
        while (path) {
          const page = await list.client(t).get(path, { token: owner.token });
          expect(page.status, page.text).to.equal(200);
          expect(page.headers.get('x-total-count')).to.equal(String(seeded.length + existing.length));
          expect(new URL(path, 'http://x').searchParams.get('limit')).to.equal('2');
          walked.push(...keys(page));
          path = nextOf(page);
          pages += 1;
        }
        expect(walked).to.deep.equal([...[...seeded].reverse(), ...existing]);
        expect(pages).to.equal(Math.ceil(walked.length / 2));

        // The other tenant's list, started from this tenant's cursor, shows the other tenant's rows only.
        const first = await get(owner, 'limit=2');
        const cursor = new URL(nextOf(first)!, 'http://x').searchParams.get('after')!;
        const theirs = keys(await get(other, 'limit=1000'));
        const fromCursor = await get(other, `after=${cursor}`);
        expect(fromCursor.status).to.equal(200);
        for (const key of keys(fromCursor)) expect(theirs).to.include(key);
        expect(theirs).to.not.include.members(seeded);
      });

      it('skips offset rows, after the cursor when both are given', async () => {
        const newestFirst = [...[...seeded].reverse(), ...existing];
        expect(keys(await get(owner, 'limit=2&offset=2'))).to.deep.equal(newestFirst.slice(2, 4));
        const cursor = new URL(nextOf(await get(owner, 'limit=1'))!, 'http://x').searchParams.get('after')!;
        expect(keys(await get(owner, `after=${cursor}&offset=1&limit=2`))).to.deep.equal(newestFirst.slice(2, 4));
      });

      it('selects a creation window with created_after and created_before', async () => {
        const after = await get(owner, `created_after=${boundary}`);
        expect(keys(after)).to.deep.equal(seeded.slice(3).reverse());
        expect(after.headers.get('x-total-count')).to.equal('2');
        const earlier = await get(owner, `created_before=${boundary}&limit=1000`);
        expect(keys(earlier)).to.deep.equal([...seeded.slice(0, 3).reverse(), ...existing]);
      });

      if (list.filters) {
        it('applies its own filters, counted in X-Total-Count', async () => {
          for (const { query, expected } of await list.filters!(t, owner, seeded)) {
            const reply = await get(owner, query);
            expect(reply.status, reply.text).to.equal(200);
            expect(keys(reply), query).to.have.members(expected);
            expect(reply.headers.get('x-total-count'), query).to.equal(String(expected.length));
          }
        });
      }

      it('answers 400 to unknown parameters, limits out of range and cursors that are not its own', async () => {
        for (const query of ['sort=name', 'limit=0', 'limit=1001', 'offset=-1', 'after=not-a-cursor', `after=${cursorOf('yesterday', 1)}`, `after=${list.foreignCursor}`, 'created_after=soon']) {
          const reply = await get(owner, query);
          expect(reply.status, query).to.equal(400);
          expect(reply.body.message_code, query).to.equal('validation_error');
        }
        expect((await get(owner, 'after=not-a-cursor')).body.message).to.match(/^after: /);
      });
    });
  }
});
