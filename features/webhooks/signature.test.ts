import { expect } from 'chai';
import { Webhook } from 'standardwebhooks';
import { newWebhookSecret, webhookHeaders, webhookSignature } from './signature.js';

describe('webhook signatures', () => {
  const body = JSON.stringify({ type: 'invocation.completed', timestamp: '2026-01-01T00:00:00.000Z', data: { invocation_id: 'a' } });

  it('verify with the standardwebhooks reference implementation', () => {
    const secret = newWebhookSecret();
    const headers = webhookHeaders(secret, 'msg_1', Math.floor(Date.now() / 1000), body);
    expect(new Webhook(secret).verify(body, headers)).to.deep.equal(JSON.parse(body));
  });

  it('match what the reference implementation signs', () => {
    const secret = newWebhookSecret();
    const at = new Date('2026-11-27T08:00:00Z');
    expect(webhookSignature(secret, 'msg_2', at.getTime() / 1000, body)).to.equal(new Webhook(secret).sign('msg_2', at, body));
  });

  it('fail verification for another body or another secret', () => {
    const secret = newWebhookSecret();
    const headers = webhookHeaders(secret, 'msg_3', Math.floor(Date.now() / 1000), body);
    expect(() => new Webhook(secret).verify(`${body} `, headers)).to.throw();
    expect(() => new Webhook(newWebhookSecret()).verify(body, headers)).to.throw();
  });

  it('are secrets of `whsec_` and base64 of 32 random bytes', () => {
    const secret = newWebhookSecret();
    expect(secret).to.match(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(secret.slice(6), 'base64')).to.have.length(32);
  });
});
