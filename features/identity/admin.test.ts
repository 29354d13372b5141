import { expect } from 'chai';
import { InputError, NotFoundError } from '../../kernel/errors/errors.js';
import { login, makeUser, startTestPlatform, type TestPlatform } from '../../test/support/platform.js';
import { generatePassword, resetPassword } from './admin.js';
import { rejection } from '../../test/support/capture.js';

describe('admin: reset a password', () => {
  let t: TestPlatform;
  before(async () => {
    t = await startTestPlatform();
  });
  after(() => t.close());

  it('sets the new password, refuses the old one and ends every sign-in of the user', async () => {
    const user = await makeUser(t.platform);
    const { refresh } = await login(t.auth, user);
    const password = generatePassword();
    expect(await resetPassword(t.platform.db, user.email.toUpperCase(), password)).to.deep.equal({ email: user.email, signedOut: 1 });
    expect((await t.auth.post('/api/auth/token/obtain', { json: { email: user.email, password: user.password } })).status).to.equal(401);
    expect((await t.auth.post('/api/auth/token/obtain', { json: { email: user.email, password } })).status).to.equal(200);
    expect((await t.auth.post('/api/auth/token/refresh', { json: { refresh } })).status, 'a refresh token from before').to.equal(401);
  });

  it('refuses a weak password and an unknown user, changing nothing', async () => {
    const user = await makeUser(t.platform);
    expect(await rejection(resetPassword(t.platform.db, user.email, 'short'))).to.be.instanceOf(InputError).with.property('message').that.includes('at least 12 characters');
    expect(await rejection(resetPassword(t.platform.db, 'nobody@example.test', generatePassword()))).to.be.instanceOf(NotFoundError);
    await login(t.auth, user);
  });
});
