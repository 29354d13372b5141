import { expect } from 'chai';
import { PASSWORD, startTestPlatform, unique, type TestPlatform } from '../../../test/support/platform.js';
import { colleague, demoDeployment, filesystemStorage, modelPayload, startDemoModelServer, tenant, upload, type Tenant } from '../../../test/support/fixtures.js';
import { DashboardClient } from '../../../test/support/dashboard-client.js';

describe('dashboard: the model the sessions page opens on', () => {
  let t: TestPlatform;
  let demo: Awaited<ReturnType<typeof startDemoModelServer>>;
  let owner: Tenant;
  let version: string;

  before(async () => {
    t = await startTestPlatform();
    version = unique('v');
    demo = await startDemoModelServer(version);
    owner = await tenant(t);
    await demoDeployment(t.private, owner.token, demo.url);
    const card = await upload(t.private, owner.token, await filesystemStorage(t.private, owner.token), '# Iris');
    const model = modelPayload('iris-classifier', version, card.file_id, { explainer: modelPayload('iris-explainer', version, card.file_id) });
    expect((await t.private.post('/api/platform_model', { token: owner.token, json: model })).status).to.equal(201);
  });
  after(async () => {
    await demo?.close();
    await t?.close();
  });

  async function signedIn(member: Tenant) {
    const client = new DashboardClient(t.auth.baseUrl);
    await client.signIn(member.user.email, PASSWORD, member.ws.name);
    return client;
  }
  /** The model chosen in the page's form, as `code:version`. */
  const shownModel = async (client: DashboardClient, query = '') => /<option value="([^"]+:[^"]+)" selected>/.exec((await client.get(`/dashboard/sessions${query}`)).text)?.[1];
  const startSession = async (member: Tenant, code: string) =>
    expect((await t.public.post(`/api/model/${code}/version/${version}/session`, { token: member.token })).status).to.equal(201);

  it('opens on the model of the caller’s newest session, the first model before any, and on the one asked for', async () => {
    const member = await colleague(t, owner, 'user');
    const client = await signedIn(member);
    const first = await shownModel(client);
    expect(first).to.be.oneOf([`iris-classifier:${version}`, `iris-explainer:${version}`]);
    const other = first === `iris-classifier:${version}` ? `iris-explainer:${version}` : `iris-classifier:${version}`;

    await startSession(member, other.split(':')[0]!);
    expect(await shownModel(client)).to.equal(other);
    await startSession(member, first!.split(':')[0]!);
    expect(await shownModel(client)).to.equal(first);
    expect(await shownModel(client, `?model=${encodeURIComponent(other)}`)).to.equal(other);
  });

  it('goes by the caller’s own sessions only, not a colleague’s', async () => {
    const member = await colleague(t, owner, 'user');
    const other = await colleague(t, owner, 'user');
    const client = await signedIn(member);
    const first = await shownModel(client);
    const second = first === `iris-classifier:${version}` ? 'iris-explainer' : 'iris-classifier';
    await startSession(other, second);
    expect(await shownModel(client)).to.equal(first);
    expect(await shownModel(await signedIn(other))).to.equal(`${second}:${version}`);
  });
});
