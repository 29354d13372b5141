import { expect } from 'chai';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { login, makeUser, makeWorkspace, startTestPlatform, unique, type TestPlatform } from '../../test/support/platform.js';
import { startSilentServer, type SilentServer } from '../../test/support/silent-server.js';
import { until } from '../../test/support/until.js';

describe('auth server: invitation mail', () => {
  let t: TestPlatform;
  let smtp: SMTPServer;
  const received: Array<{ to: string[]; data: string }> = [];

  before(async () => {
    // A real SMTP server in the test process, on a free loopback port.
    smtp = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS'],
      onData(stream, session, callback) {
        let data = '';
        stream.on('data', (chunk: Buffer) => (data += chunk.toString('utf8')));
        stream.on('end', () => {
          received.push({ to: session.envelope.rcptTo.map((r) => r.address), data });
          callback();
        });
      },
    });
    await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', resolve));
    const { port } = smtp.server.address() as AddressInfo;
    t = await startTestPlatform({ smtpUrl: `smtp://127.0.0.1:${port}`, mailFrom: 'didyma <invites@example.test>' });
  });
  after(async () => {
    await t.close();
    await new Promise<void>((resolve) => smtp.close(() => resolve()));
  });

  it('mails the invitation link to the invited address when SMTP is configured', async () => {
    const supervisor = await makeUser(t.platform);
    const ws = await makeWorkspace(t.platform, [[supervisor, 'supervisor']]);
    const token = (await login(t.auth, supervisor, ws.name)).access;
    const email = `${unique('mail')}@example.test`;
    const invited = await t.auth.post('/api/auth/invitation', { token, json: { email, role: 'user' } });
    expect(invited.status).to.equal(201);
    expect(invited.body.mail_sent).to.equal(true);
    const mail = received.find((m) => m.to.includes(email));
    expect(mail, 'a message to the invited address').to.not.equal(undefined);
    const body = mail!.data.replace(/=\r?\n/g, '').replace(/=3D/g, '=');
    expect(body).to.include(invited.body.invitation_url);
    expect(body).to.include(ws.name);
    expect(mail!.data).to.match(/^From: didyma <invites@example\.test>/m);
  });
});

describe('auth server: invitation mail through an SMTP server that never greets', () => {
  let t: TestPlatform;
  let silent: SilentServer;

  before(async () => {
    silent = await startSilentServer();
    t = await startTestPlatform({ smtpUrl: `smtp://127.0.0.1:${silent.port}`, upstreamTimeoutMs: 400 });
  });
  after(async () => {
    await t.close();
    await silent.close();
  });

  it('answers the invitation without mail at the greeting timeout, and closes the connection', async () => {
    const supervisor = await makeUser(t.platform);
    const ws = await makeWorkspace(t.platform, [[supervisor, 'supervisor']]);
    const token = (await login(t.auth, supervisor, ws.name)).access;
    // The server never greets: an answer at all is the greeting timeout's doing.
    const invited = await t.auth.post('/api/auth/invitation', { token, json: { email: `${unique('mail')}@example.test`, role: 'user' } });
    expect(invited.status).to.equal(201);
    expect(invited.body.mail_sent).to.equal(false);
    await until(async () => (await silent.connections()) === 0, 'the connection to the silent SMTP server to close', 2_000);
  });
});
