import { expect } from 'chai';
import type { Request, Response } from 'express';
import { DashboardCookies, parseCookies, serializeCookie } from './cookies.js';

const request = (secure: boolean, cookie?: string) => ({ secure, headers: { cookie } }) as unknown as Request;

function response() {
  const headers: string[] = [];
  const res = { append: (name: string, value: string) => name === 'Set-Cookie' && headers.push(value) } as unknown as Response;
  return { res, headers };
}

describe('dashboard cookies', () => {
  it('serializes httpOnly, SameSite=Strict cookies with Secure only when asked', () => {
    expect(serializeCookie('a', 'b', { httpOnly: true, secure: true, sameSite: 'Strict', path: '/' })).to.equal('a=b; Path=/; SameSite=Strict; HttpOnly; Secure');
    expect(serializeCookie('a', '', { httpOnly: true, secure: false, sameSite: 'Strict', path: '/', maxAge: 0 })).to.equal('a=; Path=/; SameSite=Strict; Max-Age=0; HttpOnly');
  });

  it('refuses names and values that would inject attributes', () => {
    const attributes = { httpOnly: true, secure: true, sameSite: 'Strict', path: '/' } as const;
    expect(() => serializeCookie('a', 'x; Domain=evil.test', attributes)).to.throw(/Invalid value/);
    expect(() => serializeCookie('a b', 'x', attributes)).to.throw(/Invalid cookie name/);
  });

  it('parses a Cookie header, keeping the first of duplicate names', () => {
    const cookies = parseCookies('dy_session=first; other=1; dy_session=second;bad; =x');
    expect(cookies.get('dy_session')).to.equal('first');
    expect(cookies.get('other')).to.equal('1');
    expect(cookies.size).to.equal(2);
    expect(parseCookies(undefined).size).to.equal(0);
  });

  it('uses __Host- names and Secure over https, or always when the dashboard URL is https', () => {
    const { res, headers } = response();
    new DashboardCookies(false).write(request(true), res, 'session', 'abc');
    new DashboardCookies(true).write(request(false), res, 'csrf', 'def');
    expect(headers).to.deep.equal(['__Host-dy_session=abc; Path=/; SameSite=Strict; HttpOnly; Secure', '__Host-dy_csrf=def; Path=/; SameSite=Strict; HttpOnly; Secure']);
  });

  it('uses plain names without Secure for a plain-http dashboard, and reads only the name of its mode', () => {
    const cookies = new DashboardCookies(false);
    const { res, headers } = response();
    cookies.write(request(false), res, 'session', 'abc');
    cookies.clear(request(false), res, 'csrf');
    expect(headers).to.deep.equal(['dy_session=abc; Path=/; SameSite=Strict; HttpOnly', 'dy_csrf=; Path=/; SameSite=Strict; Max-Age=0; HttpOnly']);
    expect(cookies.read(request(false, 'dy_session=abc'), 'session')).to.equal('abc');
    expect(cookies.read(request(true, 'dy_session=abc'), 'session')).to.equal(undefined);
  });
});
