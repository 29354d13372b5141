import { expect } from 'chai';
import { loadConfig } from './config.js';
import { parseServiceAccountGrants, parseWorkloadIssuers } from './workload.js';

describe('config: workload identity', () => {
  const issuer = { issuer: 'https://ci.example.test', audience: 'didyma', mappings: [{ value: 'repo:org/app', workspace: 'team-a' }] };

  it('reads issuers with their defaults: sub, asymmetric algorithms, discovery, role user', () => {
    const [parsed] = parseWorkloadIssuers(JSON.stringify([issuer]));
    expect(parsed).to.deep.include({ claim: 'sub', jwksUri: undefined, grants: [{ value: 'repo:org/app', workspace: 'team-a', role: 'user' }] });
    expect(parsed!.algorithms).to.include('RS256').and.not.include('HS256');
  });

  it('refuses symmetric algorithms, plain http off loopback, unknown fields and an issuer twice', () => {
    expect(() => parseWorkloadIssuers(JSON.stringify([{ ...issuer, algorithms: ['HS256'] }]))).to.throw(/algorithms: "HS256"/);
    expect(() => parseWorkloadIssuers(JSON.stringify([{ ...issuer, algorithms: ['none'] }]))).to.throw(/algorithms/);
    expect(() => parseWorkloadIssuers(JSON.stringify([{ ...issuer, issuer: 'http://ci.example.test' }]))).to.throw(/issuer 0: issuer: expected an https URL/);
    expect(() => parseWorkloadIssuers(JSON.stringify([{ ...issuer, secret: 'x' }]))).to.throw(/unknown field\(s\) secret/);
    expect(() => parseWorkloadIssuers(JSON.stringify([issuer, issuer]))).to.throw(/listed twice/);
    expect(() => parseWorkloadIssuers(JSON.stringify([{ ...issuer, audience: undefined }]))).to.throw(/audience/);
  });

  it('reads ServiceAccount mappings and refuses names Kubernetes would not take', () => {
    expect(parseServiceAccountGrants('[{"namespace":"ci","service_account":"runner","workspace":"team-a","role":"supervisor"}]')).to.deep.equal([
      { namespace: 'ci', serviceAccount: 'runner', workspace: 'team-a', role: 'supervisor' },
    ]);
    expect(() => parseServiceAccountGrants('[{"namespace":"CI","service_account":"runner","workspace":"a"}]')).to.throw(/namespace/);
    expect(() => parseServiceAccountGrants('[{"namespace":"ci","service_account":"runner","workspace":"a","role":"staff"}]')).to.throw(/role/);
  });

  it('needs a way to review ServiceAccount tokens when any is mapped', () => {
    const env = { DIDYMA_WORKLOAD_SERVICE_ACCOUNTS: '[{"namespace":"ci","service_account":"runner","workspace":"a"}]' };
    expect(() => loadConfig(env)).to.throw(/DIDYMA_WORKLOAD_SERVICE_ACCOUNTS.*DIDYMA_WORKLOAD_TOKEN_REVIEW/);
    expect(loadConfig({ ...env, DIDYMA_WORKLOAD_TOKEN_REVIEW: 'kubeconfig' }).workloadServiceAccounts).to.have.length(1);
  });
});
