import { expect } from 'chai';
import { PASSWORD, startTestPlatform, unique, type TestPlatform } from '../../test/support/platform.js';
import { colleague, registeredIris, startDemoModelServer, tenant, type Tenant } from '../../test/support/fixtures.js';
import { DashboardClient, type PageReply } from '../../test/support/dashboard-client.js';

// A member opens a session and queues a prediction from the dashboard, with
// the form generated from the model's input schema (no executor here: the
// prediction stays queued, as the API would leave it).

describe('dashboard: a session and a prediction from the input schema', () => {
  let t: TestPlatform;
  let demo: Awaited<ReturnType<typeof startDemoModelServer>>;
  let version: string;
  let member: Tenant;
  let client: DashboardClient;
  const iris = { sepal_length: '5.1', sepal_width: '3.5', petal_length: '1.4', petal_width: '0.2' };
  const inputs = (values: Record<string, string>) => Object.fromEntries(Object.entries(values).map(([name, value]) => [`input.${name}`, value]));

  before(async () => {
    t = await startTestPlatform();
    version = unique('v');
    demo = await startDemoModelServer(version);
    const owner = await tenant(t);
    await registeredIris(t, owner, demo.url, version);
    member = await colleague(t, owner, 'user');
    client = new DashboardClient(t.auth.baseUrl);
    await client.signIn(member.user.email, PASSWORD, member.ws.name);
  });
  after(async () => {
    await demo?.close();
    await t?.close();
  });

  const api = () => `/api/model/iris-classifier/version/${version}/session`;
  const invocationsOf = async (session: string) => (await t.public.get(`${api()}/${session}/invocation`, { token: member.token })).body as any[];
  const problemOf = (page: PageReply, index: number) => new RegExp(`<p class="problem" id="input-${index}-problem">([^<]*)</p>`).exec(page.text)?.[1];
  const valueOf = (page: PageReply, index: number) => new RegExp(`id="input-${index}" name="[^"]+"[^>]*value="([^"]*)"`).exec(page.text)?.[1];

  async function startSession(): Promise<{ path: string; id: string }> {
    const list = await client.get(`/dashboard/sessions?model=iris-classifier:${version}`);
    expect(list.text).to.contain('Start a session');
    const started = await client.post(`/dashboard/sessions/iris-classifier/${version}`, {}, list);
    expect(started.status, started.text).to.equal(303);
    const [, path, id] = /^(\/dashboard\/sessions\/iris-classifier\/[^/]+\/([0-9a-f-]{36}))\?notice=session-opened$/.exec(started.location ?? '') ?? [];
    expect(id, started.location ?? '').to.be.a('string');
    return { path: path!, id: id! };
  }

  it('opens a session for the member and queues a prediction built from one field per property', async () => {
    const session = await startSession();
    const page = await client.get(`${session.path}?notice=session-opened`);
    expect(page.text).to.contain('The session was opened');
    for (const name of Object.keys(iris)) expect(page.text).to.contain(`name="input.${name}"`);
    expect(page.text).not.to.contain('name="with_explanation"');

    const sent = await client.post(`${session.path}/predictions`, inputs(iris), page);
    expect(sent.status, sent.text).to.equal(303);
    expect(sent.location).to.equal(`${session.path}?notice=prediction-queued`);
    const [invocation] = await invocationsOf(session.id);
    expect(invocation).to.include({ type: 'PREDICT', status: 'QUEUED' });
    expect(JSON.parse(invocation.request.body)).to.deep.equal({ sepal_length: 5.1, sepal_width: 3.5, petal_length: 1.4, petal_width: 0.2 });
    const shown = await client.get(sent.location!);
    expect(shown.text).to.contain('The prediction was queued').and.contain('>Prediction 1 <').and.contain(invocation.id);
    expect(shown.text, 'a queued prediction has waited and run for no time yet').to.contain('<dt>Queue wait</dt><dd>—</dd><dt>Run time</dt><dd>—</dd>').and.not.contain('NaN');
    expect(shown.text, 'reloads itself while the prediction is queued').to.contain('data-reload-while-running');
    const refused = await client.post(`${session.path}/predictions`, inputs({ ...iris, sepal_length: 'x' }), shown);
    expect(refused.status).to.equal(400);
    expect(refused.text, 'an answer to a POST never reloads itself').to.contain('>Prediction 1 <').and.not.contain('data-reload-while-running');
    // The form starts from that input, so that the next prediction changes only what differs.
    expect([0, 1, 2, 3].map((i) => valueOf(shown, i))).to.deep.equal(['5.1', '3.5', '1.4', '0.2']);
    // The session is the member's own, as if opened through the API.
    const sessions = (await t.public.get(api(), { token: member.token })).body as any[];
    expect(sessions.map((s) => s.id)).to.include(session.id);
  });

  it('numbers the predictions from the oldest across pages, even when several were created in the same microsecond', async () => {
    const session = await startSession();
    for (let i = 0; i < 13; i++) {
      const sent = await t.public.post(`${api()}/${session.id}/invocation`, { token: member.token, json: { type: 'PREDICT', request: { type: 'FEATURES', body: JSON.stringify({ sepal_length: i, sepal_width: 3.5, petal_length: 1.4, petal_width: 0.2 }) } } });
      expect(sent.status, sent.text).to.equal(201);
    }
    const numbers = (page: PageReply) => [...page.text.matchAll(/<h2 id="invocation-[^"]+">Prediction (\d+) /g)].map((m) => Number(m[1]));
    const olderLink = (page: PageReply) => /href="([^"]+\?after=[^"]+)">Older predictions/.exec(page.text)![1]!.replaceAll('&amp;', '&');
    const first = await client.get(session.path);
    expect(first.text).to.contain('13 predictions');
    expect(numbers(first)).to.deep.equal([13, 12, 11, 10, 9, 8, 7, 6, 5, 4]);
    expect(numbers(await client.get(olderLink(first)))).to.deep.equal([3, 2, 1]);

    // Rows of one instant are ordered by id: the count of those older than the page follows the same order.
    await t.platform.db('invocations').where({ session_id: session.id }).update({ created_at: new Date('2026-01-01T00:00:00.123Z') });
    const tied = await client.get(session.path);
    expect(numbers(tied)).to.deep.equal([13, 12, 11, 10, 9, 8, 7, 6, 5, 4]);
    expect(numbers(await client.get(olderLink(tied)))).to.deep.equal([3, 2, 1]);
  });

  it('shows what it cannot read under its field, keeps every value typed, and queues nothing', async () => {
    const session = await startSession();
    const page = await client.get(session.path);
    const refused = await client.post(`${session.path}/predictions`, inputs({ ...iris, sepal_length: 'five', petal_width: '' }), page);
    expect(refused.status).to.equal(400);
    expect(refused.text).to.contain('Some fields could not be read; nothing was queued.');
    expect([problemOf(refused, 0), problemOf(refused, 3)]).to.deep.equal(['Enter a number.', 'Required.']);
    expect([valueOf(refused, 0), valueOf(refused, 1), valueOf(refused, 2)]).to.deep.equal(['five', '3.5', '1.4']);
    expect(await invocationsOf(session.id)).to.deep.equal([]);
  });

  it("shows the model schema's refusal under the field it names, and queues nothing", async () => {
    const session = await startSession();
    const page = await client.get(session.path);
    const refused = await client.post(`${session.path}/predictions`, inputs({ ...iris, petal_width: '-1' }), page);
    expect(refused.status).to.equal(400);
    expect(refused.text).to.contain('The model’s input schema refused a field; nothing was queued.');
    expect(problemOf(refused, 3)).to.equal('must be &gt;= 0');
    expect(valueOf(refused, 3)).to.equal('-1');
    expect(await invocationsOf(session.id)).to.deep.equal([]);
  });

  it('says a closed session takes no prediction, keeping the form filled in', async () => {
    const session = await startSession();
    const page = await client.get(session.path);
    expect((await t.public.patch(`${api()}/${session.id}?state=CLOSED`, { token: member.token })).status).to.equal(200);
    const refused = await client.post(`${session.path}/predictions`, inputs(iris), page);
    expect(refused.status).to.equal(409);
    expect(refused.text).to.match(/<div class="alert alert-error" role="alert">[^<]*closed/i);
    expect(valueOf(refused, 0)).to.equal('5.1');
    expect(await invocationsOf(session.id)).to.deep.equal([]);
  });

  it("refuses a prediction without the form's CSRF token, and in another member's session", async () => {
    const session = await startSession();
    expect((await client.post(`${session.path}/predictions`, inputs(iris))).status).to.equal(403);
    const other = new DashboardClient(t.auth.baseUrl);
    const stranger = await colleague(t, member, 'user');
    await other.signIn(stranger.user.email, PASSWORD, stranger.ws.name);
    const page = await other.get('/dashboard/sessions');
    expect((await other.post(`${session.path}/predictions`, inputs(iris), page)).status).to.equal(404);
    expect(await invocationsOf(session.id)).to.deep.equal([]);
  });
});
