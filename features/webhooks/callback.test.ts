import { expect } from 'chai';
import { allowsCallback, callbackPathProblem, endpointForCallback } from './callback.js';

describe('callback URLs allowed by webhook endpoints', () => {
  const allows = (endpoint: string, callback: string) => allowsCallback(endpoint, new URL(callback));

  it('allow the same origin with the same path or one below it by whole segments, any query', () => {
    expect(allows('https://hooks.example.com/didyma', 'https://hooks.example.com/didyma')).to.equal(true);
    expect(allows('https://hooks.example.com/didyma', 'https://hooks.example.com/didyma/job/7?run=3')).to.equal(true);
    expect(allows('https://hooks.example.com/didyma/', 'https://hooks.example.com/didyma/job')).to.equal(true);
    expect(allows('https://hooks.example.com/', 'https://hooks.example.com/anything')).to.equal(true);
  });

  it('refuse another scheme, host, port, or a path that only starts with the same letters', () => {
    expect(allows('https://hooks.example.com/didyma', 'http://hooks.example.com/didyma')).to.equal(false);
    expect(allows('https://hooks.example.com/didyma', 'https://evil.example.com/didyma')).to.equal(false);
    expect(allows('https://hooks.example.com/didyma', 'https://hooks.example.com:8443/didyma')).to.equal(false);
    expect(allows('https://hooks.example.com/didyma', 'https://hooks.example.com/didyma-evil')).to.equal(false);
    expect(allows('https://hooks.example.com/didyma/a', 'https://hooks.example.com/didyma')).to.equal(false);
  });

  it('compare paths after percent-decoding', () => {
    expect(allows('https://hooks.example.com/didyma', 'https://hooks.example.com/did%79ma/job')).to.equal(true);
    expect(allows('https://hooks.example.com/a%20b', 'https://hooks.example.com/a b/c')).to.equal(true);
    expect(allows('https://hooks.example.com/hooks', 'https://hooks.example.com/hooks%2fevil')).to.equal(false);
  });

  describe('path problems', () => {
    const problem = (callback: string) => callbackPathProblem(callback, new URL(callback));

    it('refuse an encoded slash or backslash, any case, which a receiver may decode into another path', () => {
      for (const callback of ['https://h.example.com/hooks/..%2fevil', 'https://h.example.com/hooks/..%2Fevil', 'https://h.example.com/hooks/a%2fb', 'https://h.example.com/hooks/..%5cevil', 'https://h.example.com/hooks/%5C']) {
        expect(problem(callback), callback).to.equal('the path contains an encoded slash or backslash (%2F, %5C)');
      }
    });

    it('refuse dot segments, plain, encoded or mixed, even those the URL parser resolves', () => {
      for (const callback of [
        'https://h.example.com/hooks/../evil',
        'https://h.example.com/hooks/%2e%2e/evil',
        'https://h.example.com/hooks/.%2E/evil',
        'https://h.example.com/hooks/%2e./evil',
        'https://h.example.com/hooks/./a',
        'https://h.example.com/hooks/%2e',
        'https://h.example.com/hooks\\..\\evil',
        'https://h.example.com/hooks/.\t./evil',
        'https://h.example.com/hooks/..',
      ]) {
        expect(problem(callback), callback).to.equal('the path contains a dot segment (. or ..), plain or percent-encoded');
      }
    });

    it('refuse a malformed percent-encoding, which cannot be compared', () => {
      expect(problem('https://h.example.com/hooks/%zz')).to.equal('the path contains a malformed percent-encoding');
    });

    it('accept ordinary paths, dots inside names, and dot segments in the query', () => {
      for (const callback of ['https://h.example.com/hooks/job-7?run=1', 'https://h.example.com/hooks/v1.2/...x', 'https://h.example.com/hooks/a?next=../b', 'https://h.example.com/', 'https://h.example.com']) {
        expect(problem(callback), callback).to.equal(null);
      }
    });
  });

  it('pick the most specific endpoint, the oldest among equals', () => {
    const endpoints = [
      { id: 1, url: 'https://h.example.com/' },
      { id: 2, url: 'https://h.example.com/a' },
      { id: 3, url: 'https://h.example.com/a' },
    ];
    expect(endpointForCallback(endpoints, new URL('https://h.example.com/a/b'))?.id).to.equal(2);
    expect(endpointForCallback(endpoints, new URL('https://h.example.com/b'))?.id).to.equal(1);
    expect(endpointForCallback(endpoints, new URL('https://other.example.com/a'))).to.equal(undefined);
  });
});
