import { expect } from 'chai';
import fc from 'fast-check';
import { startTestPlatform, login, makeUser, unique, type TestPlatform } from '../support/platform.js';
import { demoDeployment, filesystemStorage, IRIS, modelPayload, startDemoModelServer, tenant, upload, type Tenant } from '../support/fixtures.js';
import type { Client } from '../support/http.js';
import { sharedDatabase } from '../support/database.js';

// Property-based tests over the three OpenAPI documents, as every client reads
// them (GET /openapi.json): every operation is driven with generated valid and
// invalid path parameters, queries, headers and bodies, by two tenants that
// know each other's identifiers. Properties: never a 5xx (the servers check
// every response against the document in tests, so a mismatch is a 500 too),
// only documented statuses, nothing of one workspace reachable, shown or
// changed from the other.

const RUNS = Number(process.env.FUZZ_RUNS ?? 40);
// A failure names its seed: FUZZ_SEED=<seed> replays the same requests.
const SEED = Number(process.env.FUZZ_SEED ?? Date.now() % 2 ** 31);

type Json = any;
interface Operation {
  server: 'auth' | 'private' | 'public';
  method: string;
  path: string;
  op: Json;
  params: Json[];
}

/** What each tenant owns, by path parameter name. */
interface Owned {
  tenant: Tenant;
  user: Tenant;
  values: Record<string, string>;
  /** Text that must never appear in an answer to the other tenant. */
  secrets: string[];
}

describe('OpenAPI operations under generated input (fast-check)', function () {
  this.timeout(600_000);
  let t: TestPlatform;
  const owned: Record<'a' | 'b', Owned> = {} as never;
  const docs: Record<string, Json> = {};
  const failures: string[] = [];

  async function provision(version: string, demoUrl: string): Promise<Owned> {
    const owner = await tenant(t);
    const colleagueUser = await makeUser(t.platform);
    await t.platform.db('memberships').insert({ user_id: colleagueUser.id, workspace_id: owner.ws.id, role: 'user' });
    const member: Tenant = { user: colleagueUser, ws: owner.ws, token: (await login(t.auth, colleagueUser, owner.ws.name)).access };
    const deploymentKey = await demoDeployment(t.private, owner.token, demoUrl);
    const storageKey = await filesystemStorage(t.private, owner.token);
    const card = await upload(t.private, owner.token, storageKey, 'card');
    const registered = await t.private.post('/api/platform_model', { token: owner.token, json: modelPayload('iris-classifier', version, card.file_id) });
    expect(registered.status, registered.text).to.equal(201);
    const base = `/api/model/iris-classifier/version/${version}`;
    const session = (await t.public.post(`${base}/session`, { token: owner.token })).body.id as string;
    const invocation = (await t.public.post(`${base}/session/${session}/invocation`, { token: owner.token, json: { type: 'PREDICT', request: { type: 'FEATURES', body: IRIS } } })).body.id as string;
    const ticket = await t.private.post(`/api/storage/${storageKey}/files/request_upload`, { token: owner.token, json: { file_name: 'in.csv', content_type: 'text/csv' } });
    return {
      tenant: owner,
      user: member,
      values: {
        modelCode: 'iris-classifier',
        modelVersion: version,
        sessionId: session,
        invocationId: invocation,
        storage_key: storageKey,
        deploymentKey,
        file_id: card.file_id,
        upload_id: ticket.body.upload_id,
        workspaceId: String(owner.ws.id),
        metricName: 'total_invocations',
      },
      secrets: [owner.ws.name, version, storageKey, deploymentKey, session, invocation, card.file_id],
    };
  }

  before(async () => {
    t = await startTestPlatform();
    // Both tenants register iris-classifier, each under its own version on its own demo server.
    const [va, vb] = [unique('fz'), unique('fz')];
    demos = [await startDemoModelServer(va), await startDemoModelServer(vb)];
    owned.a = await provision(va, demos[0]!.url);
    owned.b = await provision(vb, demos[1]!.url);
    for (const [name, client] of Object.entries(clients())) docs[name] = (await client.get('/openapi.json')).body;
  });
  let demos: Array<Awaited<ReturnType<typeof startDemoModelServer>>> = [];

  after(async () => {
    for (const server of demos) await server.close();
    await t?.close();
  });

  const clients = (): Record<Operation['server'], Client> => ({ auth: t.auth, private: t.private, public: t.public });

  function operations(): Operation[] {
    const list: Operation[] = [];
    for (const server of ['auth', 'private', 'public'] as const) {
      const doc = docs[server];
      for (const [path, item] of Object.entries<Json>(doc.paths)) {
        for (const method of ['get', 'post', 'put', 'patch', 'delete']) {
          const op = item[method];
          if (!op) continue;
          const params = [...(item.parameters ?? []), ...(op.parameters ?? [])].map((p: Json) => resolve(doc, p));
          list.push({ server, method: method.toUpperCase(), path, op, params });
        }
      }
    }
    // Deletions last, so the other operations still find the tenants' resources.
    return list.sort((x, y) => Number(x.method === 'DELETE') - Number(y.method === 'DELETE'));
  }

  it('answers every operation without a 5xx, only with documented statuses, never across workspaces', async () => {
    const before = await snapshot(owned.b);
    const ops = operations();
    expect(ops.length).to.be.greaterThan(40);
    for (const operation of ops) {
      const doc = docs[operation.server];
      const requestArb = fc.record({
        // Tenant b never acts: its workspace must come out of the run exactly as it went in.
        who: fc.constantFrom<Array<'a' | 'a-user' | 'none' | 'garbage'>>('a', 'a', 'a', 'a-user', 'none', 'garbage'),
        owner: fc.constantFrom<Array<'a' | 'b'>>('a', 'a', 'b'),
        params: fc.tuple(...operation.params.map((p) => paramArbitrary(doc, p))),
        body: bodyArbitrary(doc, operation.op),
        contentType: fc.constantFrom('application/json', 'application/json', 'application/json', 'text/plain', 'application/json; charset=utf-16'),
      });
      await fc.assert(
        fc.asyncProperty(requestArb, async (request) => {
          const problem = await exercise(operation, request);
          if (problem) failures.push(problem);
          return true;
        }),
        { numRuns: RUNS, seed: SEED },
      );
    }
    expect(failures.slice(0, 20), `${failures.length} problems (FUZZ_SEED=${SEED})`).to.deep.equal([]);
    expect(await snapshot(owned.b), "the other workspace's data").to.deep.equal(before);
  });

  async function exercise(operation: Operation, request: Json): Promise<string | undefined> {
    const tokens = { a: owned.a.tenant.token, 'a-user': owned.a.user.token, none: undefined, garbage: 'not-a-token' } as Record<string, string | undefined>;
    const token = tokens[request.who];
    // Path parameters: the chosen tenant's real identifiers, or the generated value.
    let path = operation.path;
    const query = new URLSearchParams();
    const headers: Record<string, string> = {};
    let crossing = false;
    operation.params.forEach((param: Json, i: number) => {
      const generated = request.params[i] as { known: boolean; value: string } | undefined;
      if (generated === undefined) return;
      const known = owned[request.owner as 'a' | 'b'].values[param.name];
      const value = (generated.known && known !== undefined ? known : generated.value) ?? '';
      if (param.in === 'path') {
        if (generated.known && known !== undefined && request.owner !== tenantOf(request.who)) crossing = true;
        path = path.replace(`{${param.name}}`, segment(value));
      } else if (param.in === 'query') query.set(param.name, value);
      else if (param.in === 'header') headers[param.name] = value;
    });
    const url = `${path}${query.size ? `?${query}` : ''}`;
    const options: Json = { token, headers };
    const content = operation.op.requestBody?.content ?? {};
    if (request.body !== undefined) {
      if (content['multipart/form-data']) options.multipart = multipart(request.body);
      else if (content['application/x-www-form-urlencoded']) options.form = Object.fromEntries(Object.entries(request.body ?? {}).map(([k, v]) => [k, String(v)]));
      else if (typeof request.body === 'object' && request.body?.raw !== undefined) options.rawBody = request.body.raw;
      else options.json = request.body;
      if (options.json !== undefined || options.rawBody !== undefined) headers['content-type'] = request.contentType;
    }
    const label = `${operation.method} ${operation.path} as ${request.who} → ${url}`;
    let reply;
    try {
      reply = await clients()[operation.server].request(operation.method, url, options);
    } catch (error) {
      return `${label}: no answer (${(error as Error).message})`;
    }
    if (reply.status >= 500) return `${label}: ${reply.status} ${reply.text.slice(0, 300)}`;
    const documented = Object.keys(operation.op.responses ?? {});
    // The common error contract of every server (docs: 400 validation, 404 no such route, 405, 413, 415),
    // answered by the request validator and parsers before any operation runs; always the error body.
    const generic = [400, 404, 405, 413, 415].includes(reply.status);
    if (!documented.includes(String(reply.status)) && !documented.includes('default') && !generic) {
      return `${label}: undocumented status ${reply.status} ${reply.text.slice(0, 200)}`;
    }
    if (reply.status >= 400 && !(typeof reply.body?.message === 'string' && typeof reply.body?.message_code === 'string') && !operation.path.startsWith('/o/token')) {
      return `${label}: ${reply.status} without the error body: ${reply.text.slice(0, 200)}`;
    }
    if (crossing && reply.status < 300) return `${label}: ${reply.status} with the other workspace's identifiers`;
    const viewer = tenantOf(request.who);
    if (viewer) {
      const other = owned[viewer === 'a' ? 'b' : 'a'];
      // An identifier the caller sent itself may be echoed ("… not found"); anything else of the other workspace may not.
      const sent = `${url} ${JSON.stringify(request.body ?? '')}`;
      const leaked = other.secrets.find((s) => reply.text.includes(s) && !sent.includes(s));
      if (leaked) return `${label}: the answer shows ${leaked} of the other workspace`;
    }
    return undefined;
  }
});

const tenantOf = (who: string): 'a' | undefined => (who.startsWith('a') ? 'a' : undefined);

/**
 * A path segment for a generated value. Three values would address another
 * route, so a blank stands for them: the empty one (`/x/` is `/x`), and the
 * dot segments `.` and `..`, which every WHATWG client (fetch, browsers)
 * removes before sending, `%2E` and `%2E%2E` too.
 */
function segment(value: string): string {
  const encoded = encodeURIComponent(value);
  return encoded === '' || encoded === '.' || encoded === '..' ? '%20' : encoded;
}

function resolve(doc: Json, node: Json, seen = 0): Json {
  if (node && typeof node === 'object' && typeof node.$ref === 'string' && seen < 20) {
    const target = node.$ref
      .replace(/^#\//, '')
      .split('/')
      .reduce((at: Json, key: string) => at?.[key.replace(/~1/g, '/').replace(/~0/g, '~')], doc);
    return resolve(doc, target, seen + 1);
  }
  return node;
}

const hostileStrings = fc.constantFrom(
  '',
  ' ',
  '..',
  '../../etc/passwd',
  '%2e%2e%2f',
  'a/b',
  'ﬁle',
  'e\u0301',
  '\u202eexe.txt',
  '\u0000',
  'zero\u200bwidth',
  '😀',
  'ＡＢＣ',
  "'; drop table users; --",
  '<script>alert(1)</script>',
  'x'.repeat(300),
  '-1',
  '0',
  '2147483648',
  '1e309',
  'NaN',
  'true',
  'null',
  '00000000-0000-0000-0000-000000000000',
);

/** A path, query or header parameter: the tenant's real identifier, a schema-valid value, or something hostile. */
function paramArbitrary(doc: Json, param: Json): fc.Arbitrary<{ known: boolean; value: string } | undefined> {
  const schema = resolve(doc, param.schema ?? {});
  const valid = valueArbitrary(doc, schema, 0).map((v) => String(v));
  const value = fc.oneof({ weight: 3, arbitrary: valid }, { weight: 1, arbitrary: hostileStrings }, { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) });
  const present = fc.record({ known: fc.boolean(), value });
  return param.required ? present : fc.option(present, { nil: undefined });
}

/** A request body: schema-valid most of the time, else any JSON value or text that is not JSON. */
function bodyArbitrary(doc: Json, op: Json): fc.Arbitrary<unknown> {
  const content = op.requestBody?.content;
  if (!content) return fc.constant(undefined);
  const media = content['application/json'] ?? content['application/x-www-form-urlencoded'] ?? content['multipart/form-data'] ?? Object.values(content)[0];
  const schema = resolve(doc, media?.schema ?? {});
  const valid = valueArbitrary(doc, schema, 0);
  const invalid = fc.oneof(
    fc.jsonValue({ maxDepth: 3 }),
    fc.record({ raw: fc.oneof(fc.constantFrom('{', '{"a":', '[1,2', 'null', '"text"', '\u0000', '{"a":1}{"b":2}'), fc.string({ unit: 'binary', maxLength: 64 })) }),
  );
  return fc.oneof({ weight: 3, arbitrary: valid }, { weight: 2, arbitrary: invalid }, { weight: 1, arbitrary: fc.constant(undefined) });
}

/** Values of a JSON Schema (the subset the documents use), small and bounded in depth. */
function valueArbitrary(doc: Json, input: Json, depth: number): fc.Arbitrary<unknown> {
  const schema = resolve(doc, input ?? {});
  if (!schema || typeof schema !== 'object' || depth > 4) return fc.jsonValue({ maxDepth: 1 });
  if (schema.const !== undefined) return fc.constant(schema.const);
  if (Array.isArray(schema.enum)) return fc.constantFrom(...schema.enum);
  for (const key of ['oneOf', 'anyOf'] as const) {
    if (Array.isArray(schema[key])) return fc.oneof(...schema[key].map((s: Json) => valueArbitrary(doc, s, depth + 1)));
  }
  if (Array.isArray(schema.allOf)) return valueArbitrary(doc, Object.assign({}, ...schema.allOf.map((s: Json) => resolve(doc, s))), depth + 1);
  const type = Array.isArray(schema.type) ? schema.type.find((x: string) => x !== 'null') : schema.type;
  switch (type) {
    case 'string':
      return stringArbitrary(schema);
    case 'integer':
      return fc.integer({ min: schema.minimum ?? -1000, max: schema.maximum ?? 100000 });
    case 'number':
      return fc.double({ min: schema.minimum ?? -1e6, max: schema.maximum ?? 1e6, noNaN: true, noDefaultInfinity: true });
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'array':
      return fc.array(valueArbitrary(doc, schema.items ?? {}, depth + 1), { minLength: schema.minItems ?? 0, maxLength: Math.min(schema.maxItems ?? 3, 3) });
    case 'object':
    case undefined: {
      const properties = Object.entries<Json>(schema.properties ?? {});
      if (!properties.length) return type === 'object' ? fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 1 }), { maxKeys: 3 }) : fc.jsonValue({ maxDepth: 2 });
      const required: string[] = schema.required ?? [];
      return fc.record(Object.fromEntries(properties.map(([name, s]) => [name, valueArbitrary(doc, s, depth + 1)])), { requiredKeys: required.filter((r) => properties.some(([n]) => n === r)) });
    }
    default:
      return fc.jsonValue({ maxDepth: 1 });
  }
}

function stringArbitrary(schema: Json): fc.Arbitrary<string> {
  switch (schema.format) {
    case 'uuid':
      return fc.uuid();
    case 'email':
      return fc.emailAddress();
    case 'date':
      return fc.date({ min: new Date('2000-01-01'), max: new Date('2100-01-01'), noInvalidDate: true }).map((d) => d.toISOString().slice(0, 10));
    case 'date-time':
      return fc.date({ min: new Date('2000-01-01'), max: new Date('2100-01-01'), noInvalidDate: true }).map((d) => d.toISOString());
    case 'uri':
    case 'url':
      return fc.webUrl();
    case 'binary':
      return fc.string({ maxLength: 64 });
  }
  if (typeof schema.pattern === 'string') {
    const max = schema.maxLength ?? 40;
    return fc.stringMatching(new RegExp(schema.pattern)).filter((s) => s.length <= max && s.length >= (schema.minLength ?? 0));
  }
  return fc.string({ unit: 'grapheme', minLength: schema.minLength ?? 0, maxLength: Math.min(schema.maxLength ?? 40, 40) });
}

/** Multipart bodies: a generated record becomes fields, with one file part named after the first key. */
function multipart(value: unknown): FormData {
  const form = new FormData();
  if (value && typeof value === 'object') {
    for (const [key, v] of Object.entries(value as Record<string, unknown>)) {
      form.append(key, new Blob([typeof v === 'string' ? v : JSON.stringify(v) ?? '']), `${key}.bin`);
    }
  }
  return form;
}

/** Everything of a tenant's workspace the other tenant might touch. */
async function snapshot(of: Owned) {
  const ws = of.tenant.ws.id;
  const knex = await sharedDatabase();
  const rows = async (table: string, order = 'id') => knex(table).where({ workspace_id: ws }).orderBy(order).select();
  return {
    workspace: await knex('workspaces').where({ id: ws }).first(),
    models: await rows('models'),
    deployments: await rows('deployments'),
    storage: await rows('storage_configs'),
    sessions: await rows('sessions'),
    invocations: (await rows('invocations')).map((row: Json) => ({ id: row.id, body: row.body, order: row.order, type: row.type })),
    files: await rows('files'),
    members: await knex('memberships').where({ workspace_id: ws }).orderBy('user_id').select(),
  };
}
