import { expect } from 'chai';
import { countsSince, requestKey } from './kube-proxy.js';

describe('bench: counting the requests of a Kubernetes client', () => {
  it('tells LIST, GET and WATCH apart, and names the resource and subresource', () => {
    expect(requestKey('GET', '/api/v1/namespaces/ns/configmaps?labelSelector=a%3Db')).to.equal('LIST configmaps');
    expect(requestKey('GET', '/api/v1/namespaces/ns/configmaps?watch=true&resourceVersion=5')).to.equal('WATCH configmaps');
    expect(requestKey('GET', '/api/v1/namespaces/ns-credentials/secrets/x-credentials')).to.equal('GET secrets');
    expect(requestKey('PATCH', '/apis/didyma.io/v1alpha1/namespaces/ns/modeldeployments/x/status')).to.equal('PATCH modeldeployments/status');
    expect(requestKey('PUT', '/apis/coordination.k8s.io/v1/namespaces/ns/leases/op')).to.equal('PUT leases');
  });

  it('counts what came after a snapshot', () => {
    const before = { requests: { 'GET secrets': 2 }, bytes: { 'GET secrets': 10 } };
    const after = { requests: { 'GET secrets': 5, 'LIST configmaps': 1 }, bytes: { 'GET secrets': 10, 'LIST configmaps': 7 } };
    expect(countsSince(before, after)).to.deep.equal({ requests: { 'GET secrets': 3, 'LIST configmaps': 1 }, bytes: { 'LIST configmaps': 7 } });
  });
});
