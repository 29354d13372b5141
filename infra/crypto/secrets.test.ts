import crypto from 'node:crypto';
import { expect } from 'chai';
import { SecretBox } from './secrets.js';

describe('SecretBox', () => {
  const box = new SecretBox(crypto.randomBytes(32));

  it('round-trips and never stores the plaintext', () => {
    const sealed = box.sealJson({ secret_key: 'hunter2-very-secret' });
    expect(sealed).to.not.include('hunter2');
    expect(box.openJson(sealed)).to.deep.equal({ secret_key: 'hunter2-very-secret' });
    expect(box.seal('x')).to.not.equal(box.seal('x'));
  });

  it('refuses tampered ciphertext and another key', () => {
    const sealed = box.seal('value');
    const parts = sealed.split(':');
    parts[3] = Buffer.from('tampered').toString('base64');
    expect(() => box.open(parts.join(':'))).to.throw();
    expect(() => new SecretBox(crypto.randomBytes(32)).open(sealed)).to.throw();
  });
});
