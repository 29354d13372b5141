import { expect } from 'chai';
import { hashPassword, passwordProblems, verifyPassword } from './passwords.js';

describe('passwords', () => {
  it('hashes with argon2id and verifies only the right password', async () => {
    const hash = await hashPassword('Correct-Horse-Battery-9');
    expect(hash).to.match(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
    expect(await verifyPassword(hash, 'Correct-Horse-Battery-9')).to.equal(true);
    expect(await verifyPassword(hash, 'correct-horse-battery-9')).to.equal(false);
    expect(await verifyPassword(null, 'anything')).to.equal(false);
  });

  it('names what a weak password lacks', () => {
    expect(passwordProblems('short')).to.include('at least 12 characters');
    expect(passwordProblems('alllowercaseletters')).to.have.length(1);
    expect(passwordProblems('Ada-Lovelace-1815', 'lovelace@example.test')).to.include('must not contain the e-mail name');
    expect(passwordProblems('Sufficiently-Long-Pass-42')).to.deep.equal([]);
  });
});
