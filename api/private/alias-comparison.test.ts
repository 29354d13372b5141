import { expect } from 'chai';
import { startTestPlatform, unique, type TestPlatform } from '../../test/support/platform.js';
import { colleague, demoDeployment, filesystemStorage, modelPayload, startDemoModelServer, tenant, upload, type Tenant } from '../../test/support/fixtures.js';
import type { DemoModelServer } from '../../demo/model-server/server.js';
import { wilsonInterval } from '../../features/models/comparison.stats.js';
import { writeInvocation } from '../../test/support/invocation-rows.js';

const FEEDBACK_SCHEMA = {
  type: 'object',
  properties: {
    correct: { type: 'boolean' },
    score: { type: 'number' },
    label: { type: 'string', enum: ['cat', 'dog', 'bird'] },
    note: { type: 'string' },
  },
};

describe('comparison of the versions behind an alias', () => {
  let t: TestPlatform;
  let demo: DemoModelServer & { url: string };
  before(async () => {
    t = await startTestPlatform();
    demo = await startDemoModelServer('*');
  });
  after(async () => {
    await demo.close();
    await t.close();
  });

  const path = (alias = 'production') => `/api/platform_model/iris-classifier/alias/${alias}/comparison`;
  const compare = (who: Tenant, query: string, alias?: string) => t.private.get(`${path(alias)}${query}`, { token: who.token });

  /** iris-classifier at v1 (with a feedback schema) and v2 (without), `production` on v1. */
  async function setUp() {
    const owner = await tenant(t);
    await demoDeployment(t.private, owner.token, demo.url);
    const card = (await upload(t.private, owner.token, await filesystemStorage(t.private, owner.token), '# Iris')).file_id;
    const [v1, v2] = [unique('v1'), unique('v2')];
    for (const [version, extra] of [[v1, { feedback_schema: FEEDBACK_SCHEMA }], [v2, {}]] as const) {
      const reply = await t.private.post('/api/platform_model', { token: owner.token, json: modelPayload('iris-classifier', version, card, extra) });
      expect(reply.status, reply.text).to.equal(201);
    }
    const setAlias = async (alias: string, version: string) => expect((await t.private.put(`/api/platform_model/iris-classifier/alias/${alias}`, { token: owner.token, json: { version } })).status).to.equal(200);
    const openOn = async (alias: string) => {
      const reply = await t.public.post(`/api/model/iris-classifier/alias/${alias}/session`, { token: owner.token });
      expect(reply.status, reply.text).to.equal(201);
      return reply.body.id as string;
    };
    const openOnVersion = async (version: string) => (await t.public.post(`/api/model/iris-classifier/version/${version}/session`, { token: owner.token })).body.id as string;
    const shadowWith = async (alias: string, primary: string, shadow: string) => {
      const reply = await t.private.put(`/api/platform_model/iris-classifier/alias/${alias}/policy`, { token: owner.token, json: { weights: [{ version: primary, weight: 100 }], shadows: [shadow] } });
      expect(reply.status, reply.text).to.equal(200);
    };
    return { owner, v1, v2, setAlias, openOn, openOnVersion, shadowWith };
  }

  /** Writes an invocation with the times given, in milliseconds after `base` (null: not reached). */
  async function invocation(
    session: string,
    base: number,
    row: { type?: string; status: string; created: number; started?: number; completed?: number; body?: string; related_to?: string; response?: string; shadow_of?: string },
  ) {
    const at = (ms?: number) => (ms === undefined ? null : new Date(base + ms));
    return writeInvocation(t.platform.db, session, { ...row, created_at: at(row.created)!, started_at: at(row.started), completed_at: at(row.completed) });
  }

  it('answers per recorded version: outcomes, percentiles, a Wilson rate, a t mean and enum counts', async () => {
    const { owner, v1, v2, setAlias, openOn, openOnVersion } = await setUp();
    await setAlias('production', v1);
    await setAlias('staging', v1);
    const onV1 = await openOn('production');
    const onStaging = await openOn('staging');
    const direct = await openOnVersion(v1);
    await setAlias('production', v2);
    const onV2 = await openOn('production');

    const base = Date.now() - 30 * 60 * 1000;
    const since = new Date(base).toISOString();
    const until = new Date(base + 60 * 60 * 1000).toISOString();
    const first = await invocation(onV1, base, { status: 'COMPLETED', created: 0, started: 100, completed: 1_100 });
    await invocation(onV1, base, { status: 'COMPLETED', created: 1_000, started: 1_200, completed: 3_200 });
    await invocation(onV1, base, { status: 'ERROR', created: 2_000, started: 2_300, completed: 5_300 });
    await invocation(onV1, base, { status: 'CANCELLED', created: 3_000, completed: 3_500 });
    await invocation(onV1, base, { status: 'QUEUED', created: 4_000 });
    // Outside the window: just before it, and at its (exclusive) end.
    await invocation(onV1, base, { status: 'COMPLETED', created: -1, started: 10, completed: 20 });
    await invocation(onV1, base, { status: 'ERROR', created: 60 * 60 * 1000, started: 60 * 60 * 1000 + 5, completed: 60 * 60 * 1000 + 9 });
    const feedback = (body: object, created: number) => invocation(onV1, base, { type: 'DATA_SUBMISSION', status: 'COMPLETED', created, completed: created, body: JSON.stringify(body), related_to: first });
    await feedback({ correct: true, score: 4, label: 'cat' }, 10_000);
    await feedback({ correct: true, score: 5, label: 'dog' }, 11_000);
    await feedback({ correct: false, score: 3, label: 'cat' }, 12_000);
    await feedback({ correct: false, score: 9, label: 'bird' }, -5);
    // Feedback through the public route, as a client sends it: its body is what the comparison reads.
    const sent = await t.public.post(`/api/model/iris-classifier/version/${v1}/session/${onV1}/invocation/${first}/feedback`, {
      token: owner.token,
      json: { request: { type: 'FEEDBACK', body: JSON.stringify({ correct: true, label: 'cat', note: 'no score' }) } },
    });
    expect(sent.status, sent.text).to.equal(201);
    // Sessions not opened through this alias do not count.
    await invocation(onStaging, base, { status: 'ERROR', created: 5_000, started: 5_001, completed: 5_002 });
    await invocation(direct, base, { status: 'ERROR', created: 5_000, started: 5_001, completed: 5_002 });
    // v2 has no feedback schema: its feedback, JSON or not, is only counted.
    const onV2First = await invocation(onV2, base, { status: 'COMPLETED', created: 20_000, started: 20_050, completed: 20_450 });
    await invocation(onV2, base, { type: 'DATA_SUBMISSION', status: 'COMPLETED', created: 21_000, completed: 21_000, body: 'great', related_to: onV2First });

    const member = await colleague(t, owner);
    const reply = await compare(member, `?since=${encodeURIComponent(since)}&until=${encodeURIComponent(until)}`);
    expect(reply.status, reply.text).to.equal(200);
    expect(reply.body).to.include({ model_code: 'iris-classifier', alias: 'production', since, until });
    const [first1, second] = reply.body.versions;
    expect(reply.body.versions).to.have.length(2);
    expect(first1).to.deep.include({
      version: v1,
      invocations: 5,
      outcomes: { completed: 2, error: 1, cancelled: 1, pending: 1 },
      errors: 1,
    });
    // percentile_cont interpolates: p99 of [100, 200, 300] is 200 + 0.98 × 100.
    expect(first1.queue_wait_ms.count).to.equal(3);
    expect(first1.queue_wait_ms.p50).to.be.closeTo(200, 1e-6);
    expect(first1.queue_wait_ms.p99).to.be.closeTo(298, 1e-6);
    expect(first1.run_time_ms.count).to.equal(3);
    expect(first1.run_time_ms.p50).to.be.closeTo(2_000, 1e-6);
    expect(first1.run_time_ms.p99).to.be.closeTo(2_980, 1e-6);

    expect(first1.feedback.count).to.equal(4);
    const [correct, score, label, ...rest] = first1.feedback.properties;
    expect(rest).to.deep.equal([]);
    // Wilson by hand, 3 of 4 at z = 1.96: (p + z²/2n ± z·√(p(1−p)/n + z²/4n²)) / (1 + z²/n).
    const z = 1.959963984540054;
    const [n, p] = [4, 3 / 4];
    const centre = (p + (z * z) / (2 * n)) / (1 + (z * z) / n);
    const half = (z * Math.sqrt((p * (1 - p)) / n + (z * z) / (4 * n * n))) / (1 + (z * z) / n);
    expect(centre - half).to.be.closeTo(0.30064, 1e-5);
    expect(correct).to.include({ name: 'correct', kind: 'boolean', count: 4, rate: 0.75 });
    expect(correct.interval.method).to.equal('wilson');
    expect(correct.interval.low).to.be.closeTo(centre - half, 1e-9);
    expect(correct.interval.high).to.be.closeTo(centre + half, 1e-9);
    // Scores 4, 5, 3: mean 4, sd 1, t(2 df, 97.5%) = 4.302653.
    expect(score).to.include({ name: 'score', kind: 'number', count: 3, mean: 4 });
    expect(score.interval.method).to.equal('student-t');
    expect(score.interval.low).to.be.closeTo(4 - 4.302653 / Math.sqrt(3), 1e-6);
    expect(score.interval.high).to.be.closeTo(4 + 4.302653 / Math.sqrt(3), 1e-6);
    expect(label).to.deep.equal({ name: 'label', kind: 'enum', count: 4, values: [{ value: 'cat', count: 3 }, { value: 'dog', count: 1 }, { value: 'bird', count: 0 }] });

    expect(second).to.deep.equal({
      version: v2,
      invocations: 1,
      outcomes: { completed: 1, error: 0, cancelled: 0, pending: 0 },
      errors: 0,
      queue_wait_ms: { count: 1, p50: 50, p99: 50 },
      run_time_ms: { count: 1, p50: 400, p99: 400 },
      feedback: { count: 1, properties: [] },
      agreement: null,
    });

    // A window with none of it: no versions.
    const empty = await compare(member, `?since=${encodeURIComponent(new Date(base - 86_400_000).toISOString())}&until=${encodeURIComponent(since)}`);
    expect(empty.status, empty.text).to.equal(200);
    expect(empty.body.versions).to.deep.equal([]);
  });

  it('defaults to the 7 days before until, and refuses bad, inverted and too long windows', async () => {
    const { owner, v1, setAlias } = await setUp();
    await setAlias('production', v1);
    const byDefault = await compare(owner, '');
    expect(byDefault.status, byDefault.text).to.equal(200);
    expect(Date.parse(byDefault.body.until) - Date.parse(byDefault.body.since)).to.equal(7 * 86_400_000);
    const until = '2026-03-10T00:00:00.000Z';
    const upTo = await compare(owner, `?until=${until}`);
    expect(upTo.body).to.include({ since: '2026-03-03T00:00:00.000Z', until });
    const longest = await compare(owner, `?since=2026-02-07T00:00:00Z&until=${until}`);
    expect(longest.status, longest.text).to.equal(200);

    for (const query of [
      `?since=2026-02-06T23:59:59Z&until=${until}`, // 31 days and a second
      `?since=${until}&until=${until}`, // empty
      `?since=2026-03-11T00:00:00Z&until=${until}`, // inverted
      '?since=yesterday',
      '?until=2026-03-10',
      '?window=7d',
    ]) {
      const reply = await compare(owner, query);
      expect(reply.status, query).to.equal(400);
      expect(reply.body.message_code, query).to.equal('validation_error');
    }
    expect((await compare(owner, '', 'Not_An_Alias')).status).to.equal(400);
  });

  it("answers 404 for another workspace's alias and for an alias never set, and keeps a deleted alias's sessions", async () => {
    const { owner, v1, setAlias, openOn } = await setUp();
    await setAlias('production', v1);
    const session = await openOn('production');
    const base = Date.now() - 60_000;
    await invocation(session, base, { status: 'COMPLETED', created: 0, started: 1, completed: 2 });
    const stranger = await tenant(t);
    expect((await compare(stranger, '')).status).to.equal(404);
    expect((await compare(owner, '', 'never-set')).status).to.equal(404);
    // Another workspace's own `production` of the same model code sees its sessions only: none.
    const other = await setUp();
    await other.setAlias('production', other.v1);
    const theirs = await compare(other.owner, '');
    expect(theirs.status, theirs.text).to.equal(200);
    expect(theirs.body.versions).to.deep.equal([]);
    expect((await t.private.delete('/api/platform_model/iris-classifier/alias/production', { token: owner.token })).status).to.equal(204);
    const kept = await compare(owner, '');
    expect(kept.status, kept.text).to.equal(200);
    expect(kept.body.versions.map((v: { version: string; invocations: number }) => [v.version, v.invocations])).to.deep.equal([[v1, 1]]);
  });

  it("answers a shadow version's agreement with its primary: labels exactly, numbers within the tolerance", async () => {
    const { owner, v1, v2, setAlias, openOn, shadowWith } = await setUp();
    await setAlias('production', v1);
    await shadowWith('production', v1, v2);
    const session = await openOn('production');
    const shadowSession = ((await t.platform.db('sessions').where({ shadow_of: session }).first()) as { id: string }).id;
    const base = Date.now() - 30 * 60 * 1000;
    const window = `since=${encodeURIComponent(new Date(base).toISOString())}&until=${encodeURIComponent(new Date(base + 3_600_000).toISOString())}`;
    const answer = (version: string, data: unknown[]) =>
      JSON.stringify({ model_name: 'iris-classifier', model_version: version, outputs: [{ name: 'out', shape: [data.length], datatype: 'FP64', data }] });
    let at = 0;
    /** A prediction of the session and its shadow copy, each with its status and answer (given only when COMPLETED). */
    const pair = async (primary: unknown[] | 'ERROR', shadow: unknown[] | 'ERROR' | 'QUEUED', into = { session, shadowSession }) => {
      at += 1_000;
      const status = (side: unknown) => (Array.isArray(side) ? 'COMPLETED' : (side as string));
      const response = (version: string, side: unknown) => (Array.isArray(side) ? answer(version, side) : '');
      const times = (s: string) => (s === 'QUEUED' ? {} : { started: at + 10, completed: at + 20 });
      const id = await invocation(into.session, base, { status: status(primary), created: at, ...times(status(primary)), response: response(v1, primary) });
      await invocation(into.shadowSession, base, { status: status(shadow), created: at + 1, ...times(status(shadow)), response: response(v2, shadow), shadow_of: id });
    };
    await pair(['setosa', 'virginica'], ['setosa', 'virginica']); // labels: agree
    await pair(['setosa', 'virginica'], ['setosa', 'versicolor']); // labels: disagree
    await pair([1, 2], [1, 2]); // integers: agree
    await pair([1.5], [1.75]); // at the tolerance 0.25 (exact in binary): agree; by default: disagree
    await pair([1.5], [1.8]); // beyond 0.25: disagree
    await pair([0.1], [0.1000001]); // within 1e-6: agree at both tolerances
    await pair([1.5, 2.5], [1.5]); // length mismatch: disagree
    await pair(['setosa'], 'ERROR'); // a failed shadow is not compared
    await pair('ERROR', ['setosa']); // nor a shadow of a failed primary
    await pair(['setosa'], 'QUEUED'); // nor a pending one

    const reply = await compare(owner, `?${window}&tolerance=0.25`);
    expect(reply.status, reply.text).to.equal(200);
    const [primary, shadow] = reply.body.versions;
    expect(primary).to.deep.include({ version: v1, invocations: 10, agreement: null });
    expect(shadow).to.deep.include({ version: v2, invocations: 10, outcomes: { completed: 8, error: 1, cancelled: 0, pending: 1 } });
    expect(shadow.agreement).to.deep.equal({ compared: 7, agreed: 4, rate: 4 / 7, interval: wilsonInterval(4, 7), tolerance: 0.25, max_compared: 5_000, truncated: false });
    // Wilson by hand for 4 of 7 (z = 1.96): 0.2504 to 0.8419.
    expect(shadow.agreement.interval.low).to.be.closeTo(0.25045, 1e-4);
    expect(shadow.agreement.interval.high).to.be.closeTo(0.84188, 1e-4);
    const byDefault = await compare(owner, `?${window}`);
    expect(byDefault.body.versions[1].agreement).to.deep.include({ compared: 7, agreed: 3, tolerance: 1e-6 });
    for (const bad of ['-1', 'abc', '1e7', '']) {
      const refused = await compare(owner, `?${window}&tolerance=${bad}`);
      expect(refused.status, bad).to.equal(400);
    }

    // Another workspace's alias of the same name and model code: its pairs are its own.
    const other = await setUp();
    await other.setAlias('production', other.v1);
    await other.shadowWith('production', other.v1, other.v2);
    const theirs = await other.openOn('production');
    const theirShadow = ((await t.platform.db('sessions').where({ shadow_of: theirs }).first()) as { id: string }).id;
    await pair(['x'], ['y'], { session: theirs, shadowSession: theirShadow });
    expect((await compare(owner, `?${window}&tolerance=0.25`)).body.versions[1].agreement).to.deep.include({ compared: 7, agreed: 4 });
    expect((await compare(other.owner, `?${window}`)).body.versions[1].agreement).to.deep.include({ compared: 1, agreed: 0 });
  });
});
