import { expect } from 'chai';
import { allowsCallback, endpointForCallback } from './callback.js';

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
