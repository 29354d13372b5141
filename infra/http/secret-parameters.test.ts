import { expect } from 'chai';
import type { OpenApiDocument } from './openapi.js';
import { redactUrl, secretParameters } from './secret-parameters.js';
import { withoutUrlCredentials } from '../logging/logger.js';

describe('secret parameters', () => {
  const doc = {
    openapi: '3.1.0',
    paths: {
      '/api/invitation/{token}': { get: { parameters: [{ name: 'token', in: 'path', 'x-secret': true, schema: { type: 'string' } }], responses: {} } },
      '/api/invitation/{token}/accept': { post: { parameters: [{ name: 'token', in: 'path', 'x-secret': true, schema: { type: 'string' } }], responses: {} } },
      '/api/thing/{id}': { get: { parameters: [{ name: 'id', in: 'path', schema: { type: 'string' } }, { name: 'code', in: 'query', 'x-secret': true }], responses: {} } },
    },
  } as unknown as OpenApiDocument;
  const secrets = secretParameters([doc], ['next']);

  it('redacts the path segments and query values the document marks x-secret, and only those', () => {
    expect(redactUrl('/api/invitation/abc', secrets)).to.equal('/api/invitation/[redacted]');
    expect(redactUrl('/api/invitation/abc/accept?x=1', secrets)).to.equal('/api/invitation/[redacted]/accept?x=1');
    expect(redactUrl('/api/thing/42?code=s3cret&limit=2&next=%2Fa%3Ftoken%3Dt', secrets)).to.equal('/api/thing/42?code=[redacted]&limit=2&next=[redacted]');
  });

  it('redacts a secret segment however the path is spelled, undocumented tails included', () => {
    expect(redactUrl('/API/%69nvitation/abc/whatever', secrets)).to.equal('/API/%69nvitation/[redacted]/whatever');
    expect(redactUrl('/api/invitation/abc/', secrets)).to.equal('/api/invitation/[redacted]/');
  });

  it('removes credentials from URLs in error texts', () => {
    expect(withoutUrlCredentials('connect to amqp://guest:pw@rabbit:5672/ failed')).to.equal('connect to amqp://[redacted]@rabbit:5672/ failed');
    expect(withoutUrlCredentials('GET https://s3/b/k?X-Amz-Signature=abc&X-Amz-Credential=def&part=1')).to.equal('GET https://s3/b/k?X-Amz-Signature=[redacted]&X-Amz-Credential=[redacted]&part=1');
  });
});
