import fs from 'node:fs';
import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { startExecutor } from '../../executor/start.js';
import { makeUser, startTestPlatform, unique, type TestPlatform } from '../support/platform.js';
import { colleague, demoDeployment, filesystemStorage, IRIS, modelPayload, startDemoModelServer, tenant, upload, type Tenant } from '../support/fixtures.js';
import { Browsers, overflowOf, screenshot, signIn } from '../support/browser.js';
import { until } from '../support/until.js';

// The pages members use every day, in Chromium, over data made through the
// public API: their sessions of a model, a session's invocations, datasets.

describe('dashboard in a browser: sessions, invocations and datasets', function () {
  this.timeout(180_000);
  let browsers: Browsers;
  let t: TestPlatform;
  let executor: Awaited<ReturnType<typeof startExecutor>>;
  let demo: Awaited<ReturnType<typeof startDemoModelServer>>;
  let version: string;
  let owner: Tenant;
  let storage: string;
  let dashboard: string;

  before(async () => {
    browsers = new Browsers();
    t = await startTestPlatform();
    executor = await startExecutor(t.platform);
    version = unique('v');
    demo = await startDemoModelServer(version);
    owner = await tenant(t);
    await demoDeployment(t.private, owner.token, demo.url, unique('iris-demo-deployment'));
    storage = await filesystemStorage(t.private, owner.token, unique('datasets'));
    const card = await upload(t.private, owner.token, storage, '# Iris');
    const chain = modelPayload('iris-classifier', version, card.file_id, { explainer: modelPayload('iris-explainer', version, card.file_id, { need_context: true }) });
    const registered = await t.private.post('/api/platform_model', { token: owner.token, json: chain });
    expect(registered.status, registered.text).to.equal(201);
    dashboard = `${t.auth.baseUrl}/dashboard`;
  });
  after(async () => {
    await browsers?.closeAll();
    await executor?.close();
    await demo?.close();
    await t?.close();
  });

  const base = () => `/api/model/iris-classifier/version/${version}`;
  const model = () => `iris-classifier:${version}`;

  async function openSession(who: Tenant): Promise<string> {
    const reply = await t.public.post(`${base()}/session`, { token: who.token });
    expect(reply.status, reply.text).to.equal(201);
    return reply.body.id;
  }

  async function setState(who: Tenant, session: string, state: 'OPEN' | 'CLOSED') {
    expect((await t.public.patch(`${base()}/session/${session}?state=${state}`, { token: who.token })).status).to.equal(200);
  }

  async function predict(who: Tenant, session: string, withExplanation = false): Promise<string> {
    const reply = await t.public.post(`${base()}/session/${session}/invocation`, { token: who.token, json: { type: 'PREDICT', request: { type: 'FEATURES', body: IRIS }, with_explanation: withExplanation } });
    expect(reply.status, reply.text).to.equal(201);
    return reply.body.id;
  }

  async function feedback(who: Tenant, session: string, invocation: string, body: object) {
    const reply = await t.public.post(`${base()}/session/${session}/invocation/${invocation}/feedback`, { token: who.token, json: { request: { body: JSON.stringify(body) } } });
    expect(reply.status, reply.text).to.equal(201);
  }

  /** The session's invocations once `count` of them have all finished, newest first. */
  async function finished(who: Tenant, session: string, count: number): Promise<any[]> {
    let items: any[] = [];
    await until(async () => {
      items = (await t.public.get(`${base()}/session/${session}/invocation`, { token: who.token })).body;
      return items.length === count && items.every((i) => i.status === 'COMPLETED');
    }, `${count} finished invocations`, 30_000);
    return items;
  }

  /** A session with a prediction, its explanation, and feedback on both; `extra` plain predictions before them. */
  async function workedSession(who: Tenant, extra = 0) {
    const session = await openSession(who);
    for (let i = 0; i < extra; i++) await predict(who, session);
    const explained = await predict(who, session, true);
    const [explanation] = await finished(who, session, extra + 2);
    await feedback(who, session, explained, { correct: true, note: 'petals look right' });
    await feedback(who, session, explanation.id, { useful: false });
    return { session, explained, explanation: explanation.id as string };
  }

  async function member(): Promise<{ who: Tenant; page: Page }> {
    const who = await colleague(t, owner, 'user');
    const { page } = await browsers.launch();
    await signIn(page, dashboard, who.user, owner.ws.name);
    return { who, page };
  }

  const rows = (page: Page, table: string) => page.getByRole('table', { name: table }).locator('tbody tr');
  const mainText = async (page: Page) => (await page.locator('main').textContent()) ?? '';

  it("lists a member's own sessions of a model, a page at a time, filtered by state, and closes one", async () => {
    const { who, page } = await member();
    const sessions: string[] = [];
    for (let i = 0; i < 21; i++) sessions.push(await openSession(who));
    for (const id of sessions.slice(0, 2)) await setState(who, id, 'CLOSED');
    await openSession(owner); // another user's: never listed

    await page.getByRole('navigation', { name: 'Dashboard sections' }).getByRole('link', { name: 'Sessions' }).click();
    await page.getByLabel('Model').selectOption(model());
    await page.getByRole('button', { name: 'Show sessions' }).click();
    expect(await mainText(page)).to.contain('21 sessions of yours');
    expect(await rows(page, 'Sessions').count()).to.equal(20);
    await page.getByRole('link', { name: 'Older sessions' }).click();
    expect(await rows(page, 'Sessions').allTextContents()).to.have.length(1).and.satisfy((texts: string[]) => texts[0]!.includes(sessions[0]!));
    await page.getByRole('link', { name: 'Newest sessions' }).click();
    expect(await rows(page, 'Sessions').count()).to.equal(20);

    await page.getByLabel('State').selectOption('CLOSED');
    await page.getByRole('button', { name: 'Show sessions' }).click();
    expect(await rows(page, 'Sessions').count()).to.equal(2);
    expect(await page.getByRole('link', { name: /^Export session / }).count()).to.equal(2);
    await page.getByLabel('State').selectOption('OPEN');
    await page.getByRole('button', { name: 'Show sessions' }).click();
    expect(await rows(page, 'Sessions').count()).to.equal(19);
    await screenshot(page, 'sessions');

    await page.getByRole('button', { name: `Close session ${sessions[20]}` }).click();
    expect(await page.getByRole('status').textContent()).to.contain('The session was closed');
    expect(await page.getByLabel('State').inputValue()).to.equal('OPEN');
    expect(await rows(page, 'Sessions').count()).to.equal(18);
    const closed = await t.public.get(`${base()}/session?state=CLOSED`, { token: who.token });
    expect(closed.body.map((s: any) => s.id)).to.include(sessions[20]);
  });

  it("shows a session's predictions with readable results, their explanations and feedback, a page at a time", async () => {
    const { who, page } = await member();
    const { session, explained } = await workedSession(who, 10);

    await page.goto(`${dashboard}/sessions?model=${encodeURIComponent(model())}`);
    await page.getByRole('link', { name: session }).click();
    const articles = page.locator('article.invocation');
    expect(await mainText(page)).to.contain('11 predictions');
    expect(await articles.count()).to.equal(10);
    const newest = articles.first();
    // Numbered by place in the session: the newest of 11 is 11, whatever its order among all the session's invocations.
    expect(await newest.getByRole('heading', { level: 2 }).textContent()).to.match(/^Prediction 11 completed$/);
    expect(await articles.nth(9).getByRole('heading', { level: 2 }).textContent()).to.match(/^Prediction 2 completed$/);
    expect(await newest.textContent()).to.contain(explained);
    expect(await newest.locator('.latency').first().textContent()).to.match(/^Queue wait\d+(\.\d)? m?sRun time\d+(\.\d)? m?s$/);
    const result = newest.locator('.exchange section').nth(1);
    expect(await result.textContent()).to.contain('predicted_class').and.contain('setosa').and.contain('probabilities');
    // The class probabilities as bars, named and printed; what was sent stays values.
    const probabilities = result.getByRole('img', { name: /^probabilities: setosa 0\.9\d*, / });
    expect(await probabilities.locator('rect.bar').count()).to.equal(3);
    expect(await probabilities.locator('text.bar-name').allTextContents()).to.deep.equal(['setosa', 'versicolor', 'virginica']);
    expect(await newest.locator('.exchange section').first().textContent()).to.contain('sepal_length').and.contain('5.1');
    expect(await newest.locator('.exchange section').first().locator('svg').count()).to.equal(0);
    const explanation = newest.locator('section.explanation');
    expect(await explanation.textContent()).to.contain(`iris-explainer:${version}`).and.contain('Explanation 1').and.contain('contributions').and.contain('Feedback on this explanation').and.contain('useful');
    const contributions = explanation.getByRole('img', { name: /^contributions: / });
    expect(await contributions.locator('text.bar-name').count()).to.equal(4);
    expect(await contributions.locator('line.zero-axis').count()).to.equal(1);
    expect(await explanation.locator('.latency').textContent()).not.to.contain('—').and.not.contain('NaN');
    expect(await newest.locator('ul.feedback').last().textContent()).to.contain('petals look right');
    expect(await mainText(page), 'values are shown, not JSON').not.to.match(/\{"|":/);
    await screenshot(page, 'session', false);
    await page.setViewportSize({ width: 800, height: 800 });
    expect(await overflowOf(page), 'the session page fits 800 px').to.deep.include({ page: 0 });

    await page.getByRole('link', { name: 'Older predictions' }).click();
    expect(await articles.count()).to.equal(1);
    expect(await articles.first().getByRole('heading', { level: 2 }).textContent()).to.match(/^Prediction 1 completed$/);
    expect(await articles.first().textContent()).to.contain('No feedback yet.');
    await page.getByRole('link', { name: 'Newest predictions' }).click();
    expect(await articles.count()).to.equal(10);

    // Another member of the workspace cannot open it.
    const { page: other } = await member();
    expect((await other.goto(`${dashboard}/sessions/iris-classifier/${version}/${session}`))!.status()).to.equal(404);
  });

  it('exports a closed session as a dataset, lists the versions a page at a time and downloads them', async () => {
    const { who, page } = await member();
    const { session } = await workedSession(who, 1);

    await page.goto(`${dashboard}/datasets?model=${encodeURIComponent(model())}&session=${session}`);
    expect(await page.getByLabel('Session', { exact: true }).inputValue()).to.equal(session);
    expect(await page.getByLabel('Format').locator('option').allTextContents()).to.deep.equal(['JSON Lines', 'Apache Parquet']);
    await page.getByLabel('Storage key').fill(storage);
    await page.getByRole('button', { name: 'Export' }).click();
    expect(await page.getByRole('alert').textContent()).to.contain('Only a CLOSED session can be exported');
    expect(await page.getByLabel('Storage key').inputValue()).to.equal(storage);

    await page.goto(`${dashboard}/sessions?model=${encodeURIComponent(model())}`);
    await page.getByRole('button', { name: `Close session ${session}` }).click();
    await page.getByRole('link', { name: `Export session ${session}` }).click();
    await page.getByLabel('Storage key').fill(storage);
    await page.getByLabel('Name (optional)').fill('iris-reviews');
    await page.getByLabel('Format').selectOption('parquet');
    await page.getByRole('button', { name: 'Export' }).click();
    expect(await page.getByRole('status').textContent()).to.contain('The dataset was exported');
    const row = rows(page, 'Datasets').first();
    expect(await row.getByRole('cell').allTextContents()).to.include.members(['iris-reviews v1', `iris-classifier ${version}`, storage]);
    expect(await row.getByRole('cell').nth(2).textContent()).to.match(/^2 \(\d\.\d KiB\)$/);
    await screenshot(page, 'datasets');

    const [records] = await Promise.all([page.waitForEvent('download'), row.getByRole('link', { name: 'Download the records of iris-reviews version 1' }).click()]);
    expect(records.suggestedFilename()).to.equal('iris-reviews-v1.jsonl');
    const lines = fs.readFileSync((await records.path())!, 'utf8').trim().split('\n').map((line) => JSON.parse(line));
    expect(lines.map((l) => l.session_id)).to.deep.equal([session, session]);
    expect(lines[1].explanations[0].feedback[0].body).to.equal('{"useful":false}');
    const [table] = await Promise.all([page.waitForEvent('download'), row.getByRole('link', { name: 'Download the table of iris-reviews version 1' }).click()]);
    expect(table.suggestedFilename()).to.match(/\.parquet$/);
    expect(fs.readFileSync((await table.path())!).subarray(0, 4).toString(), 'a Parquet file').to.equal('PAR1');
    const [manifest] = await Promise.all([page.waitForEvent('download'), row.getByRole('link', { name: /manifest/ }).click()]);
    expect(JSON.parse(fs.readFileSync((await manifest.path())!, 'utf8'))).to.deep.include({ row_count: 2, file: 'records.jsonl' });

    for (let i = 0; i < 20; i++) {
      const exported = await t.public.post(`${base()}/session/${session}/dataset`, { token: who.token, json: { storage_key: storage, name: 'bulk' } });
      expect(exported.status, exported.text).to.equal(201);
    }
    await page.goto(`${dashboard}/datasets`);
    expect(await mainText(page)).to.contain('21 dataset versions');
    expect(await rows(page, 'Datasets').count()).to.equal(20);
    await page.getByRole('link', { name: 'Older datasets' }).click();
    expect(await rows(page, 'Datasets').allTextContents()).to.have.length(1).and.satisfy((texts: string[]) => texts[0]!.startsWith('iris-reviews v1'));

    // Datasets are their exporter's: another member gets a 404 for the same download.
    const id = /\/datasets\/([0-9a-f-]{36})\/records/.exec((await row.getByRole('link', { name: /records/ }).getAttribute('href'))!)![1];
    const { page: other } = await member();
    expect((await other.goto(`${dashboard}/datasets/${id}/records`))!.status()).to.equal(404);
  });

  it('starts a session and sends a prediction from the form the input schema makes; its result and explanation show', async () => {
    const { who, page } = await member();
    await page.goto(`${dashboard}/sessions?model=${model()}`);
    await page.getByRole('button', { name: `Start a session with ${model()}` }).click();
    await page.waitForURL(/notice=session-opened/);
    const form = page.getByRole('form', { name: 'New prediction' });
    // A typo: refused on the page, the other values kept, nothing queued.
    await form.getByLabel('sepal_length').fill('5,1');
    await form.getByLabel('sepal_width').fill('3.5');
    await form.getByLabel('petal_length').fill('1.4');
    await form.getByLabel('petal_width').fill('0.2');
    await form.getByRole('button', { name: 'Queue the prediction' }).click();
    expect(await form.locator('#input-0-problem').textContent()).to.equal('Enter a number.');
    expect(await form.getByLabel('petal_width').inputValue()).to.equal('0.2');
    await form.getByLabel('sepal_length').fill('5.1');
    await form.getByLabel('Explain the prediction too').check();
    await form.getByRole('button', { name: 'Queue the prediction' }).click();
    await page.waitForURL(/notice=prediction-queued/);
    const session = /\/sessions\/[^/]+\/[^/]+\/([0-9a-f-]{36})/.exec(page.url())![1]!;
    const [prediction] = await finished(who, session, 2).then((items) => items.filter((i) => i.type === 'PREDICT'));
    expect(JSON.parse(prediction.request.body)).to.deep.equal(JSON.parse(IRIS));
    // The page reloads itself while the prediction runs, until its result and explanation show.
    const card = page.getByRole('article', { name: /^Prediction 1 / });
    await card.getByRole('heading', { name: 'Explanations' }).waitFor({ timeout: 30_000 });
    expect(await card.locator('.badge').first().textContent()).to.equal('completed');
    expect(await page.locator('[data-reload-while-running]').count()).to.equal(0);
  });

  it('fits every table of the dashboard in a 1280 px wide window', async () => {
    await demoDeployment(t.private, owner.token, `${demo.url}/a/longer/path/of/a/model/registry`, unique('a-rather-long-deployment-key-of-a-team'));
    const webhook = await t.private.post('/api/webhook', { token: owner.token, json: { url: 'http://127.0.0.1:1/hooks/of/a/receiver/with/a/long/path', events: ['dataset.exported'], description: 'ops' } });
    expect(webhook.status, webhook.text).to.equal(201);
    const { session } = await workedSession(owner);
    const { page } = await browsers.launch();
    await signIn(page, dashboard, owner.user, owner.ws.name);
    // Closed from the dashboard, the session leaves the audit trail's longest action name.
    await page.goto(`${dashboard}/sessions?model=${model()}`);
    await page.getByRole('button', { name: `Close session ${session}` }).click();
    expect((await t.public.post(`${base()}/session/${session}/dataset`, { token: owner.token, json: { storage_key: storage } })).status).to.equal(201);
    await page.goto(`${dashboard}/tokens`);
    await page.getByLabel('Name').fill('a-token-with-a-descriptive-name-for-the-nightly-batch');
    await page.getByRole('button', { name: 'Create token' }).click();
    await page.goto(`${dashboard}/applications`);
    await page.getByLabel('Name').fill('the-billing-service-of-the-finance-team');
    await page.getByRole('button', { name: 'Create application' }).click();
    const staff = await makeUser(t.platform, { staff: true });
    await t.platform.db('memberships').insert({ user_id: staff.id, workspace_id: owner.ws.id, role: 'supervisor' });
    const { page: staffPage } = await browsers.launch();
    await signIn(staffPage, dashboard, staff, owner.ws.name);
    await staffPage.goto(`${dashboard}/workspaces`);
    expect(await overflowOf(staffPage)).to.deep.include({ page: 0 }).and.satisfy((o: { tables: number[] }) => o.tables.length > 0 && o.tables.every((pixels) => pixels === 0));

    await t.platform.audit.drain();
    const withTables = ['/tokens', '/applications', '/members', '/models', '/deployments', '/storage', '/webhooks', `/webhooks/${webhook.body.id}`, '/audit', `/sessions?model=${model()}`, '/datasets'];
    for (const path of [...withTables, `/sessions/iris-classifier/${version}/${session}`]) {
      await page.goto(`${dashboard}${path}`);
      if (withTables.includes(path)) expect(await page.locator('.table-wrap').count(), `a table on ${path}`).to.be.greaterThan(0);
      const overflow = await overflowOf(page);
      expect(overflow.page, `the page ${path} scrolls sideways`).to.equal(0);
      expect(overflow.tables.filter((pixels) => pixels > 0), `a table of ${path} is cut off`).to.deep.equal([]);
    }
  });
});
