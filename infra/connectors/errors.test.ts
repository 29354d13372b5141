import { expect } from 'chai';
import { HttpStatusError, HttpTransportError } from '../net/errors.js';
import { callUpstream, UpstreamError, withoutAddresses } from './errors.js';

describe('upstream errors: what an invocation user reads names no internal address', () => {
  it('takes URLs and host:port pairs out of a text, and leaves times and versions alone', () => {
    expect(withoutAddresses('POST http://10.0.3.7:8080/v2/models/iris/infer failed: connection refused')).to.equal('POST <url> failed: connection refused');
    expect(withoutAddresses('cannot reach model-server.ml.svc.cluster.local:9000 or 10.0.0.5:8501')).to.equal('cannot reach <address> or <address>');
    expect(withoutAddresses('at 2026-01-01T10:30:00, version 1.7.1 said: bad shape')).to.equal('at 2026-01-01T10:30:00, version 1.7.1 said: bad shape');
  });

  it('keeps the URL in the diagnosis for the logs and leaves it out of what callers read', async () => {
    const refused = new HttpTransportError('POST http://10.0.3.7:8080/v2/models/iris/infer failed: connection refused', 'connect', 'always');
    const error = await callUpstream('demo', 'model server', () => Promise.reject(refused)).catch((e: unknown) => e as UpstreamError);
    expect(error).to.be.instanceOf(UpstreamError);
    expect(error.diagnosis).to.contain('10.0.3.7:8080');
    expect(error.message).to.equal('Deployment "demo": the model server could not be reached.');
    expect(error.publicMessage).to.equal(error.message);
    expect(error.transient).to.equal(true);

    const answered = new HttpStatusError('POST http://models.internal:8080/infer answered HTTP 400: shape (1, 3) does not match http://models.internal:8080/docs', 400, 'shape (1, 3) does not match http://models.internal:8080/docs', 'never');
    const status = await callUpstream('demo', 'model server', () => Promise.reject(answered)).catch((e: unknown) => e as UpstreamError);
    expect(status.publicMessage).to.equal('Deployment "demo": the model server answered HTTP 400: shape (1, 3) does not match <url>');
    expect(status.message).to.contain('models.internal:8080');
  });

  it('says the same whether the policy refused the address, the host refused the connection or nothing answered', async () => {
    const failures = [
      new HttpTransportError('GET http://10.0.0.9/v2 was refused by the outbound URL policy: a private address', 'refused_by_policy', 'never'),
      new HttpTransportError('GET http://10.0.0.9/v2 failed: connection refused', 'connect', 'always'),
      new HttpTransportError('GET http://10.0.0.9/v2 failed: no connection within 5000 ms', 'connect_timeout', 'always'),
      new HttpTransportError('GET http://10.0.0.9/v2 failed: no complete answer within 10000 ms', 'timeout', 'idempotent'),
      new HttpTransportError('GET http://internal.example/v2 failed: host name not found', 'dns', 'never'),
    ];
    const told = await Promise.all(failures.map((failure) => callUpstream('demo', 'model registry', () => Promise.reject(failure)).catch((e: unknown) => e as UpstreamError)));
    expect(new Set(told.map((error) => error.message))).to.deep.equal(new Set(['Deployment "demo": the model registry could not be reached.']));
    expect(new Set(told.map((error) => error.publicMessage)).size).to.equal(1);
  });

  it('names the kind of a transient failure where it is made, and none for a failure a retry will not fix', async () => {
    const kindOf = async (failure: Error) => (await callUpstream('demo', 'model server', () => Promise.reject(failure)).catch((e: unknown) => e as UpstreamError)).kind;
    expect(await kindOf(new HttpTransportError('POST http://10.0.0.9/infer failed: connection refused', 'connect', 'always'))).to.equal('unreachable');
    expect(await kindOf(new HttpTransportError('POST http://10.0.0.9/infer failed: no connection within 5000 ms', 'connect_timeout', 'always'))).to.equal('unreachable');
    expect(await kindOf(new HttpTransportError('POST http://10.0.0.9/infer failed: no complete answer within 10000 ms', 'timeout', 'idempotent'))).to.equal('timeout');
    expect(await kindOf(new HttpStatusError('POST http://10.0.0.9/infer answered HTTP 503', 503, '', 'always'))).to.equal('server_error');
    expect(await kindOf(new HttpStatusError('POST http://10.0.0.9/infer answered HTTP 400', 400, '', 'never'))).to.equal(undefined);
    expect(await kindOf(new HttpTransportError('GET http://internal.example/v2 failed: host name not found', 'dns', 'never'))).to.equal(undefined);
  });
});
