import { expect } from 'chai';
import { InputError } from '../../kernel/errors/errors.js';
import { assertObjectKey, fileObjectKey } from './object-key.js';

describe('object keys', () => {
  it('builds the key of a workspace file', () => {
    expect(fileObjectKey(7, '0b7c3c1e-8d0a-4f5e-9c61-2f0f5f4b0a11')).to.equal('workspace/7/files/0b7c3c1e-8d0a-4f5e-9c61-2f0f5f4b0a11');
  });

  it('accepts keys made of plain segments', () => {
    expect(() => assertObjectKey('workspace/1/files/abc-def_1.bin')).to.not.throw();
  });

  for (const [key, reason] of [
    ['', 'empty'],
    ['../x', '".." is not allowed'],
    ['a/../../x', '".." is not allowed'],
    ['a/..', '".." is not allowed'],
    ['/etc/passwd', 'must not start with "/"'],
    ['a\\..\\b', 'backslashes'],
    ['a//b', 'empty path segments'],
    ['a/b/', 'empty path segments'],
    ['a/.meta/b', 'must not start with "."'],
    ['a/b\u0000c', 'control characters'],
    ['x'.repeat(1025), 'longer than 1024 bytes'],
  ] as const) {
    it(`refuses ${JSON.stringify(key.slice(0, 20))} (${reason})`, () => {
      expect(() => assertObjectKey(key)).to.throw(InputError, reason);
    });
  }
});
