import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import type { ValidateFunction } from 'ajv';
import { startTestPlatform, login, makeUser, unique, type TestPlatform } from '../support/platform.js';
import { demoDeployment, filesystemStorage, IRIS, modelPayload, startDemoModelServer, tenant, upload, type Tenant } from '../support/fixtures.js';
import type { Client } from '../support/http.js';
import { encodeBody, inPool, isRecord, segment } from '../support/fuzz-requests.js';
import { sharedDatabase, usingPostgres } from '../support/database.js';
import { bodyArbitrary, contentTypeArbitrary, encodingArbitrary, forgeryArbitrary, paramArbitrary, rawSegmentArbitrary, resolve, unknownQueryArbitrary, type ParamValue } from '../support/openapi-arbitraries.js';
import { startPrometheusStub } from '../support/prometheus-stub.js';
import { responseAjv } from '../../infra/http/operations/ajv.js';

// Property-based tests over the three OpenAPI documents, as every client reads
// them (GET /openapi.json): every operation is driven with requests generated
// from the document (path parameters, queries, bodies; valid, and hostile:
// wrong types, huge strings, NUL, odd unicode, deep nesting, lying content
// types and encodings) by anonymous callers, forged tokens, a member, a
// supervisor and an API token of workspace a, staff (with and without a's
// workspace in the token), and the supervisor of a third workspace, who all
// know workspace b's identifiers. Properties: never a
// 5xx (the servers check every response against the document in tests, so a
// mismatch is a 500 too), only documented statuses, every error body in the
// one `Error` shape, nothing of one workspace reachable, shown or changed from
// another. The run writes a summary (requests per operation, statuses, seed)
// to FUZZ_SUMMARY.

const REQUESTS = Number(process.env.FUZZ_REQUESTS ?? 10_400);
const CONCURRENCY = Number(process.env.FUZZ_CONCURRENCY ?? 8);
// A failure names its seed: FUZZ_SEED=<seed> replays the same requests.
const SEED = Number(process.env.FUZZ_SEED ?? Date.now() % 2 ** 31);
const SUMMARY_FILE = process.env.FUZZ_SUMMARY ?? path.join(os.tmpdir(), `didyma-fuzz-${process.pid}.json`);
// Small limits, so that the generated bodies reach them.
const LIMITS = { maxBodyBytes: 256 * 1024, maxUploadBytes: 64 * 1024, maxLogoBytes: 16 * 1024, exposeTokenApi: true };

type Json = any;
type Server = 'auth' | 'private' | 'public';
const IDENTITIES = ['anonymous', 'forged', 'member', 'supervisor', 'api-token', 'staff', 'staff-in-workspace', 'other-workspace'] as const;
type Identity = (typeof IDENTITIES)[number];

interface Operation {
  server: Server;
  method: string;
  path: string;
  op: Json;
  params: Json[];
}

interface GeneratedRequest {
  who: Identity;
  owner: 'a' | 'b';
  /** A request as a client that read the document sends it: real identifiers, known body, declared content type, nothing extra. */
  wellFormed: boolean;
  /** Every parameter that names a tenant's resource gets the real identifier, so the request reaches the resource. */
  allKnown: boolean;
  params: Array<ParamValue | undefined>;
  unknownQuery: [string, string] | undefined;
  /** Each query parameter sent twice (`?limit=1&limit=2`). */
  repeatQuery: boolean;
  /** The Authorization header of a forger. */
  forgery: string;
  /** Percent-encoding sent as is in place of the first path parameter (`%zz`, `%00`, an overlong `%C0%AE`). */
  rawSegment: string | undefined;
  body: unknown;
  /** Send the body the schema alone cannot make valid (credentials, the model's input) instead, where there is one. */
  knownBody: boolean;
  contentType: string;
  encoding: string | undefined;
}

/** What a tenant owns, by path parameter name. */
interface Owned {
  tenant: Tenant;
  member: Tenant;
  values: Record<string, string>;
  /** Text that must never appear in an answer to another workspace. */
  secrets: string[];
  refresh: string;
}

const tomorrow = () => new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);

describe('OpenAPI operations under generated input (fast-check)', function () {
  this.timeout(900_000);
  let t: TestPlatform;
  const owned: Record<'a' | 'b', Owned> = {} as never;
  const tokens: Partial<Record<Identity, string>> = {};
  const docs: Record<string, Json> = {};
  const errorSchemas: Record<string, ValidateFunction> = {};
  let apiTokenId: number;
  let demos: Array<Awaited<ReturnType<typeof startDemoModelServer>>> = [];
  let prometheus: Awaited<ReturnType<typeof startPrometheusStub>> | undefined;

  async function provision(version: string, demoUrl: string): Promise<Owned> {
    const owner = await tenant(t);
    const memberUser = await makeUser(t.platform);
    await t.platform.db('memberships').insert({ user_id: memberUser.id, workspace_id: owner.ws.id, role: 'user' });
    const member: Tenant = { user: memberUser, ws: owner.ws, token: (await login(t.auth, memberUser, owner.ws.name)).access };
    const deploymentKey = await demoDeployment(t.private, owner.token, demoUrl);
    const storageKey = await filesystemStorage(t.private, owner.token);
    const card = await upload(t.private, owner.token, storageKey, 'card');
    const registered = await t.private.post('/api/platform_model', { token: owner.token, json: modelPayload('iris-classifier', version, card.file_id) });
    expect(registered.status, registered.text).to.equal(201);
    const base = `/api/model/iris-classifier/version/${version}`;
    const session = (await t.public.post(`${base}/session`, { token: owner.token })).body.id as string;
    const invocation = (await t.public.post(`${base}/session/${session}/invocation`, { token: owner.token, json: { type: 'PREDICT', request: { type: 'FEATURES', body: IRIS } } })).body.id as string;
    const ticket = await t.private.post(`/api/storage/${storageKey}/files/request_upload`, { token: owner.token, json: { file_name: 'in.csv', content_type: 'text/csv' } });
    const invited = await t.auth.post('/api/auth/invitation', { token: owner.token, json: { email: `${unique('invited')}@example.test`, role: 'user' } });
    expect(invited.status, invited.text).to.equal(201);
    const principal = await t.platform.authenticator.authenticate(owner.token);
    const target = await t.platform.identity.apiTokens.create(principal, owner.ws.id, { name: 'target', expiration_date: tomorrow() });
    const invitationToken = new URL(invited.body.invitation_url as string).searchParams.get('token')!;
    const alias = unique('prod');
    const aliased = await t.private.put(`/api/platform_model/iris-classifier/alias/${alias}`, { token: owner.token, json: { version } });
    expect(aliased.status, aliased.text).to.equal(200);
    return {
      tenant: owner,
      member,
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
        workspace_id: String(owner.ws.id),
        tokenId: String(target.token.id),
        invitationId: String(invited.body.id),
        token: invitationToken,
        metricName: 'total_invocations',
        alias,
      },
      refresh: (await login(t.auth, owner.user, owner.ws.name)).refresh,
      secrets: [owner.ws.name, version, storageKey, deploymentKey, session, invocation, card.file_id],
    };
  }

  before(async () => {
    // Metric queries reach a stand-in Prometheus: without one they answer 502 "not configured".
    prometheus = await startPrometheusStub();
    t = await startTestPlatform({ ...LIMITS, prometheusUrl: prometheus.url });
    // Both tenants register iris-classifier, each under its own version on its own demo server.
    const [va, vb] = [unique('fz'), unique('fz')];
    demos = [await startDemoModelServer(va), await startDemoModelServer(vb)];
    owned.a = await provision(va, demos[0]!.url);
    owned.b = await provision(vb, demos[1]!.url);
    tokens.supervisor = owned.a.tenant.token;
    tokens.member = owned.a.member.token;
    const identityToken = await t.platform.identity.apiTokens.create(await t.platform.authenticator.authenticate(owned.a.tenant.token), owned.a.tenant.ws.id, { name: 'fuzz', expiration_date: tomorrow() });
    tokens['api-token'] = identityToken.key;
    apiTokenId = identityToken.token.id;
    const staffUser = await makeUser(t.platform, { staff: true });
    tokens.staff = (await login(t.auth, staffUser)).access;
    await t.platform.db('memberships').insert({ user_id: staffUser.id, workspace_id: owned.a.tenant.ws.id, role: 'user' });
    tokens['staff-in-workspace'] = (await login(t.auth, staffUser, owned.a.tenant.ws.name)).access;
    tokens['other-workspace'] = (await tenant(t)).token;
    for (const [name, client] of Object.entries(clients())) {
      docs[name] = (await client.get('/openapi.json')).body;
      errorSchemas[name] = responseAjv().addSchema(docs[name], name).getSchema(`${name}#/components/schemas/Error`)!;
    }
  });

  after(async () => {
    for (const server of demos) await server.close();
    await t?.close();
    await prometheus?.close();
  });

  const clients = (): Record<Server, Client> => ({ auth: t.auth, private: t.private, public: t.public });

  function operations(): Operation[] {
    const list: Operation[] = [];
    for (const server of ['auth', 'private', 'public'] as const) {
      const doc = docs[server];
      for (const [route, item] of Object.entries<Json>(doc.paths)) {
        for (const method of ['get', 'post', 'put', 'patch', 'delete']) {
          const op = item[method];
          if (!op) continue;
          const params = [...(item.parameters ?? []), ...(op.parameters ?? [])].map((p: Json) => resolve(doc, p));
          list.push({ server, method: method.toUpperCase(), path: route, op, params });
        }
      }
    }
    // Deletions last, the workspace's own last of all, so the other operations still find the tenants' resources.
    const rank = (o: Operation) => (o.method !== 'DELETE' ? 0 : o.op.operationId === 'deleteWorkspace' ? 2 : 1);
    return list.sort((x, y) => rank(x) - rank(y));
  }

  function requestArbitrary(operation: Operation): fc.Arbitrary<GeneratedRequest> {
    const doc = docs[operation.server];
    return fc.record({
      who: fc.constantFrom(...IDENTITIES, 'supervisor', 'member', 'staff'),
      owner: fc.constantFrom<Array<'a' | 'b'>>('a', 'a', 'b'),
      wellFormed: fc.oneof({ weight: 4, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
      allKnown: fc.boolean(),
      params: fc.tuple(...operation.params.map((p) => paramArbitrary(doc, p))),
      unknownQuery: unknownQueryArbitrary,
      repeatQuery: fc.oneof({ weight: 9, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
      forgery: forgeryArbitrary,
      rawSegment: rawSegmentArbitrary,
      body: bodyArbitrary(doc, operation.op),
      knownBody: fc.oneof({ weight: 3, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
      contentType: contentTypeArbitrary(operation.op),
      encoding: encodingArbitrary,
    });
  }

  it('answers every operation without a 5xx, with documented statuses and the one error body, never across workspaces', async () => {
    const before = await snapshot(owned.b);
    const ops = operations();
    expect(ops.length).to.be.greaterThan(50);
    const perOperation = Math.ceil(REQUESTS / ops.length);
    const failures: string[] = [];
    const started = new Date();
    const summary = { date: started.toISOString(), database: usingPostgres() ? 'postgresql' : 'pglite', seed: SEED, requests: 0, seconds: 0, concurrency: CONCURRENCY, statuses: {} as Record<string, number>, identities: {} as Record<string, Record<string, number>>, operations: {} as Record<string, { requests: number; statuses: Record<string, number> }> };
    for (const [index, operation] of ops.entries()) {
      const requests = fc.sample(requestArbitrary(operation), { numRuns: perOperation, seed: SEED + index });
      const counts = (summary.operations[`${operation.server} ${operation.method} ${operation.path}`] = { requests: 0, statuses: {} as Record<string, number> });
      await inPool(requests, CONCURRENCY, async (request) => {
        const { status, problem } = await exercise(operation, request);
        if (problem) failures.push(problem);
        counts.requests++;
        summary.requests++;
        counts.statuses[status] = (counts.statuses[status] ?? 0) + 1;
        summary.statuses[status] = (summary.statuses[status] ?? 0) + 1;
        const byIdentity = (summary.identities[request.who] ??= {});
        byIdentity[status] = (byIdentity[status] ?? 0) + 1;
      });
      await restore();
    }
    summary.seconds = Math.round((Date.now() - started.getTime()) / 100) / 10;
    fs.mkdirSync(path.dirname(SUMMARY_FILE), { recursive: true });
    fs.writeFileSync(SUMMARY_FILE, `${JSON.stringify({ ...summary, problems: failures.length, firstProblems: failures.slice(0, 20) }, null, 2)}\n`);
    expect(failures.slice(0, 20), `${failures.length} problems (FUZZ_SEED=${SEED})`).to.deep.equal([]);
    expect(summary.requests).to.be.at.least(REQUESTS);
    expect(Object.keys(summary.statuses).filter((status) => Number(status) >= 500)).to.deep.equal([]);
    expect(await snapshot(owned.b), "the other workspace's data").to.deep.equal(before);
  });

  /** What the generated requests may have switched off in workspace a, switched on again, so later operations still reach it. */
  async function restore() {
    await t.platform.db('workspaces').where({ id: owned.a.tenant.ws.id }).update({ disabled: false });
    await t.platform.db('api_tokens').where({ id: apiTokenId }).update({ is_active: true });
    await t.platform.db('sessions').where({ id: owned.a.values.sessionId }).update({ state: 'OPEN' });
  }

  async function exercise(operation: Operation, generated: GeneratedRequest): Promise<{ status: number | 'no answer'; problem?: string }> {
    const declared = Object.keys(operation.op.requestBody?.content ?? { 'application/json': {} })[0]!;
    const request = generated.wellFormed ? { ...generated, allKnown: true, knownBody: true, unknownQuery: undefined, repeatQuery: false, rawSegment: undefined, encoding: undefined, contentType: declared } : generated;
    const staff = request.who === 'staff' || request.who === 'staff-in-workspace';
    // Staff may act on any workspace: it acts on a's only, so b's stays as it was.
    const owner = staff ? 'a' : request.owner;
    const { url, crossing } = addressOf(operation, request, owner, staff);
    const headers: Record<string, string> = request.who === 'forged' ? { authorization: request.forgery } : {};
    const options = { token: request.who === 'forged' ? undefined : tokens[request.who], headers };
    let body = request.knownBody ? (knownBody(operation.op.operationId, owned[owner]) ?? request.body) : request.body;
    if (staff && isRecord(body) && 'workspace_id' in body) body = { ...body, workspace_id: owned.a.tenant.ws.id };
    const sent = encodeBody({ content: operation.op.requestBody?.content ?? {}, body, contentType: request.contentType, encoding: request.encoding }, options);
    const label = `${operation.method} ${operation.path} as ${request.who} → ${url.slice(0, 300)} (${headers['content-type'] ?? 'no body'}${headers['content-encoding'] ? `, ${headers['content-encoding']}` : ''})`;
    let reply;
    try {
      reply = await clients()[operation.server].request(operation.method, url, options);
    } catch (error) {
      const cause = (error as Error & { cause?: Error & { code?: string } }).cause;
      return { status: 'no answer', problem: `${label}: no answer (${(error as Error).message}${cause ? `: ${cause.code ?? ''} ${cause.message}` : ''})` };
    }
    const problem = judge(operation, reply, { label, crossing: crossing && operation.op.security?.length > 0 && !staff, viewer: workspaceOf(request.who), sent: `${url} ${sent}` });
    return { status: reply.status, problem };
  }

  /** The URL of a request, and whether it names another workspace's resources than the caller's. */
  function addressOf(operation: Operation, request: GeneratedRequest, owner: 'a' | 'b', staff: boolean): { url: string; crossing: boolean } {
    let route = operation.path;
    const query = new URLSearchParams();
    let crossing = false;
    let rawSegment = request.rawSegment;
    operation.params.forEach((param: Json, i: number) => {
      const generated = request.params[i];
      if (param.in === 'path' && rawSegment !== undefined) {
        route = route.replace(`{${param.name}}`, rawSegment);
        rawSegment = undefined;
        return;
      }
      if (generated === undefined) return;
      const known = owned[owner].values[param.name];
      const useKnown = (generated.known || request.allKnown || (staff && STAFF_PINNED.has(param.name))) && known !== undefined;
      const value = useKnown ? known : generated.value;
      const viewer = workspaceOf(request.who);
      // A value both workspaces hold (the model code each registered) names the viewer's own resource too.
      const shared = viewer !== undefined && (owned as Partial<Record<string, Owned>>)[viewer]?.values[param.name] === known;
      if (useKnown && owner !== viewer && !shared) crossing = true;
      if (param.in === 'path') route = route.replace(`{${param.name}}`, segment(value));
      else if (param.in === 'query') query.set(param.name, value);
    });
    if (request.repeatQuery) for (const [name, value] of [...query]) query.append(name, value);
    if (request.unknownQuery) query.append(...request.unknownQuery);
    return { url: `${route}${query.size ? `?${query}` : ''}`, crossing };
  }

  function judge(operation: Operation, reply: { status: number; body: Json; text: string }, request: { label: string; crossing: boolean; viewer: string | undefined; sent: string }): string | undefined {
    const { label } = request;
    if (reply.status >= 500) return `${label}: ${reply.status} ${reply.text.slice(0, 300)}`;
    // 431 (request line and headers too large) is answered before any route, on every path, as each document's description says.
    if (reply.status !== 431 && !Object.keys(operation.op.responses ?? {}).includes(String(reply.status))) return `${label}: undocumented status ${reply.status} ${reply.text.slice(0, 200)}`;
    if (reply.status >= 400) {
      const validate = errorSchemas[operation.server]!;
      if (!validate(reply.body)) return `${label}: ${reply.status} not in the Error shape (${JSON.stringify(validate.errors)}): ${reply.text.slice(0, 200)}`;
    }
    if (request.crossing && reply.status < 300) return `${label}: ${reply.status} with another workspace's identifiers`;
    // An identifier the caller sent itself may be echoed ("… not found"); anything else of another workspace may not.
    // Open operations answer whoever holds the capability in the path (an invitation token), whatever the bearer.
    if (request.viewer === undefined || !operation.op.security?.length) return undefined;
    for (const other of (['a', 'b'] as const).filter((name) => name !== request.viewer)) {
      const leaked = owned[other].secrets.find((s) => reply.text.includes(s) && !request.sent.includes(s));
      if (leaked) return `${label}: the answer shows ${leaked} of workspace ${other}`;
    }
    return undefined;
  }
});

/** Bodies the schemas alone cannot make valid (credentials, a model's input), for the operations that take them. */
function knownBody(operationId: string, of: Owned): unknown {
  switch (operationId) {
    case 'obtainToken':
      return { email: of.tenant.user.email, password: of.tenant.user.password, workspace: of.tenant.ws.name };
    case 'refreshToken':
      return { refresh: of.refresh };
    case 'createInvitation':
      return { email: `${unique('fuzz')}@example.test`, role: 'user' };
    case 'createInvocation':
      return { type: 'PREDICT', request: { type: 'FEATURES', body: IRIS } };
    case 'createFeedback':
      return { request: { body: JSON.stringify({ correct: true }) } };
    default:
      return undefined;
  }
}

/** Parameters naming a workspace: staff gets a's, whatever was generated. */
const STAFF_PINNED = new Set(['workspaceId', 'workspace_id']);

/** The workspace whose identifiers an identity may use; staff is everyone's and no one's. */
function workspaceOf(who: Identity): 'a' | 'c' | undefined {
  if (who === 'member' || who === 'supervisor' || who === 'api-token') return 'a';
  if (who === 'other-workspace') return 'c';
  return undefined;
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
    apiTokens: (await rows('api_tokens')).map((row: Json) => ({ id: row.id, is_active: row.is_active })),
    invitations: (await rows('invitations')).map((row: Json) => ({ id: row.id, accepted_at: row.accepted_at })),
  };
}
