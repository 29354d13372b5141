import { expect } from 'chai';
import { SignJWT, decodeJwt } from 'jose';
import { parseWorkloadIssuers } from '../../kernel/config/workload.js';
import { makeWorkspace, startTestPlatform, unique, type TestPlatform } from '../support/platform.js';
import { KeycloakAdmin, keycloakEnv, realmClient } from '../support/keycloak.js';
import { issuerKey } from '../support/workload-issuer.js';

// A workload's token from a real issuer: Keycloak's client-credentials token
// of the realm's service-account client (audience `didyma` by a mapper),
// exchanged at didyma's /o/token and used on the APIs.

const EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
const JWT = 'urn:ietf:params:oauth:token-type:jwt';

describe('workload identity: a Keycloak service account\'s token exchanged at /o/token', function () {
  this.timeout(120_000);
  const client = realmClient('didyma-workload');
  let issuer: string;
  let t: TestPlatform;
  let strict: TestPlatform;
  let workspace: { id: number; name: string };

  /** A token of the workload client, by the client credentials grant at Keycloak. */
  async function keycloakToken(): Promise<string> {
    const reply = await fetch(`${issuer}/protocol/openid-connect/token`, {
      method: 'POST',
      body: new URLSearchParams({ grant_type: 'client_credentials', client_id: client.clientId, client_secret: client.secret }),
    });
    if (!reply.ok) throw new Error(`Keycloak token: ${reply.status} ${await reply.text()}`);
    return ((await reply.json()) as { access_token: string }).access_token;
  }

  const exchange = (platform: TestPlatform, subjectToken: string) =>
    platform.auth.post('/o/token', { form: { grant_type: EXCHANGE, subject_token: subjectToken, subject_token_type: JWT } });

  before(async () => {
    issuer = keycloakEnv().issuer;
    await (await KeycloakAdmin.connect()).ensureClient(client.clientId);
    const name = unique('workload');
    const config = (audience: string, value: string) => parseWorkloadIssuers(JSON.stringify([{ issuer, audience, claim: 'azp', mappings: [{ value, workspace: name, role: 'supervisor' }] }]));
    t = await startTestPlatform({ workloadIssuers: config('didyma', client.clientId) });
    // The same issuer expecting another audience and mapping another client: Keycloak's token passes neither.
    strict = await startTestPlatform({ workloadIssuers: config('another-service', 'another-client') });
    workspace = await makeWorkspace(t.platform, [], name);
  });
  after(async () => {
    await t?.close();
    await strict?.close();
  });

  it('exchanges the token for a didyma access token that the public and private APIs accept', async () => {
    const subjectToken = await keycloakToken();
    expect(decodeJwt(subjectToken)).to.include({ iss: issuer, azp: client.clientId });
    const reply = await exchange(t, subjectToken);
    expect(reply.status).to.equal(200);
    expect(reply.body).to.include({ issued_token_type: 'urn:ietf:params:oauth:token-type:access_token', token_type: 'Bearer', scope: 'user supervisor' });
    const token = reply.body.access_token as string;
    expect(decodeJwt(token)).to.include({ workspace: workspace.name, token_type: 'access' });
    expect((await t.public.get('/api/model', { token })).status).to.equal(200);
    expect((await t.private.get('/api/deployment', { token })).status).to.equal(200);
  });

  it('refuses Keycloak\'s token where the audience expected is another', async () => {
    const reply = await exchange(strict, await keycloakToken());
    expect(reply.status).to.equal(400);
    expect(reply.body).to.include({ error: 'invalid_request' });
    expect(reply.body.error_description).to.contain('"aud" claim');
  });

  it('refuses a token naming Keycloak as issuer but signed with a key Keycloak does not publish', async () => {
    const forger = await issuerKey('not-a-keycloak-kid');
    const claims = { ...decodeJwt(await keycloakToken()) };
    const forged = await new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid: forger.kid }).sign(forger.privateKey);
    const reply = await exchange(t, forged);
    expect(reply.status).to.equal(400);
    expect(reply.body.error_description).to.contain('"kid"');
  });
});
