import { expect } from 'chai';
import { decodeJwt } from 'jose';
import type { KubeApi } from '../../infra/kube/api.js';
import { parseServiceAccountGrants } from '../../kernel/config/workload.js';
import { makeWorkspace, startTestPlatform, unique, type TestPlatform } from '../support/platform.js';
import { kubeconfigPath, testNamespace } from '../support/kube.js';
import { until } from '../support/until.js';

// A ServiceAccount's token, as the TokenRequest API (and a projected volume)
// gives it, exchanged at /o/token: the auth server asks the test control
// plane (TokenReview) whether it is valid now and for the audience `didyma`.

const EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
const JWT = 'urn:ietf:params:oauth:token-type:jwt';

describe('Kubernetes: a ServiceAccount token exchanged at /o/token, checked by TokenReview', function () {
  this.timeout(120_000);
  let api: KubeApi;
  let namespace: string;
  let t: TestPlatform;
  let workspace: { id: number; name: string };

  const serviceAccount = async (name: string) => {
    await api.core.createNamespacedServiceAccount({ namespace, body: { metadata: { name } } });
  };
  const tokenOf = async (name: string, audience = 'didyma') => {
    const request = await api.core.createNamespacedServiceAccountToken({ name, namespace, body: { spec: { audiences: [audience], expirationSeconds: 600 } } });
    return request.status!.token;
  };
  const exchange = (subjectToken: string) => t.auth.post('/o/token', { form: { grant_type: EXCHANGE, subject_token: subjectToken, subject_token_type: JWT } });

  before(async () => {
    const kube = await testNamespace('dy-workload');
    namespace = kube.namespace;
    api = await kube.api();
    const name = unique('pods');
    const grants = parseServiceAccountGrants(
      JSON.stringify([
        { namespace, service_account: 'runner', workspace: name, role: 'user' },
        { namespace, service_account: 'short-lived', workspace: name, role: 'user' },
      ]),
    );
    t = await startTestPlatform({ workloadTokenReview: 'kubeconfig', kubeconfig: kubeconfigPath(), workloadServiceAccounts: grants });
    workspace = await makeWorkspace(t.platform, [], name);
    await serviceAccount('runner');
    await serviceAccount('stranger');
  });
  after(() => t?.close());

  it('exchanges the token of a mapped ServiceAccount for an access token the APIs accept', async () => {
    const reply = await exchange(await tokenOf('runner'));
    expect(reply.status).to.equal(200);
    expect(reply.body).to.include({ issued_token_type: 'urn:ietf:params:oauth:token-type:access_token', token_type: 'Bearer', scope: 'user' });
    const token = reply.body.access_token as string;
    expect(decodeJwt(token)).to.include({ workspace: workspace.name });
    expect((await t.public.get('/api/model', { token })).status).to.equal(200);
    const user = await t.platform.db('users').where({ id: decodeJwt(token).user_id }).first();
    expect(user.name).to.equal(`system:serviceaccount:${namespace}:runner`);
  });

  it('refuses a token for another audience, and one of a ServiceAccount no mapping names', async () => {
    const audience = await exchange(await tokenOf('runner', 'another-service'));
    expect(audience.status).to.equal(400);
    expect(audience.body).to.include({ error: 'invalid_request' });
    const unmapped = await exchange(await tokenOf('stranger'));
    expect(unmapped.status).to.equal(403);
    expect(unmapped.body).to.include({ error: 'access_denied' });
  });

  it('refuses the token once its ServiceAccount is deleted', async () => {
    await serviceAccount('short-lived');
    const token = await tokenOf('short-lived');
    expect((await exchange(token)).status).to.equal(200);
    await api.core.deleteNamespacedServiceAccount({ name: 'short-lived', namespace });
    await expectRefusedSoon(token, 'the deleted ServiceAccount\'s token refused');
  });

  it('refuses a pod\'s token once the pod is deleted', async () => {
    const pod = await api.core.createNamespacedPod({ namespace, body: { metadata: { name: 'worker' }, spec: { serviceAccountName: 'runner', containers: [{ name: 'main', image: 'didyma:test' }] } } });
    const bound = await api.core.createNamespacedServiceAccountToken({
      name: 'runner',
      namespace,
      body: { spec: { audiences: ['didyma'], expirationSeconds: 600, boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: 'worker', uid: pod.metadata!.uid } } },
    });
    const token = bound.status!.token;
    expect((await exchange(token)).status).to.equal(200);
    await api.core.deleteNamespacedPod({ name: 'worker', namespace, gracePeriodSeconds: 0 });
    await expectRefusedSoon(token, 'the deleted pod\'s token refused');
  });

  /** The API server keeps a token it authenticated for a few seconds (its authentication cache): waits for the refusal. */
  async function expectRefusedSoon(token: string, what: string) {
    let refused: Awaited<ReturnType<typeof exchange>> | undefined;
    await until(async () => (refused = await exchange(token)).status !== 200, what);
    expect(refused!.status).to.equal(400);
    expect(refused!.body.error_description).to.contain('Kubernetes API does not accept it');
  }
});
