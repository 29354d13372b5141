import type { Request, Response } from 'express';

// The dashboard's cookies: the opaque session id, (before sign-in) the random
// value the sign-in and registration forms' CSRF tokens are bound to, and
// during a single sign-on the random value that binds it to this browser.
export type CookieKind = 'session' | 'csrf' | 'sso';

export interface CookieAttributes {
  httpOnly: boolean;
  secure: boolean;
  sameSite: 'Strict' | 'Lax';
  path: string;
  /** Seconds; 0 deletes the cookie. Absent: a browser-session cookie. */
  maxAge?: number;
}

const NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const VALUE = /^[!#-+\--:<-[\]-~]*$/; // RFC 6265 cookie-octet: no space, quote, comma, semicolon or backslash

export function serializeCookie(name: string, value: string, attributes: CookieAttributes): string {
  if (!NAME.test(name)) throw new Error(`Invalid cookie name ${name}`);
  if (!VALUE.test(value)) throw new Error(`Invalid value for cookie ${name}`);
  const parts = [`${name}=${value}`, `Path=${attributes.path}`, `SameSite=${attributes.sameSite}`];
  if (attributes.maxAge !== undefined) parts.push(`Max-Age=${attributes.maxAge}`);
  if (attributes.httpOnly) parts.push('HttpOnly');
  if (attributes.secure) parts.push('Secure');
  return parts.join('; ');
}

/** Cookie header → values. The first of duplicate names wins: browsers send the most specific cookie first. */
export function parseCookies(header: string | undefined): Map<string, string> {
  const cookies = new Map<string, string>();
  for (const pair of (header ?? '').split(';')) {
    const eq = pair.indexOf('=');
    if (eq <= 0) continue;
    const name = pair.slice(0, eq).trim();
    const value = pair.slice(eq + 1).trim();
    if (name && !cookies.has(name)) cookies.set(name, value);
  }
  return cookies;
}

/**
 * Names and attributes of the dashboard's cookies. Always httpOnly and
 * SameSite=Strict, except the single sign-on one: the provider's redirect
 * back is a cross-site navigation, on which browsers send Lax cookies only. Secure (and then the `__Host-` prefix, which browsers
 * accept only with Secure, Path=/ and no Domain) whenever the request came
 * over https or the dashboard's public URL is https; a plain-http dashboard
 * (localhost development, the tests) gets the same cookies without both.
 */
export class DashboardCookies {
  constructor(private readonly alwaysSecure: boolean) {}

  isSecure(req: Request): boolean {
    return this.alwaysSecure || req.secure;
  }

  nameOf(req: Request, kind: CookieKind): string {
    return `${this.isSecure(req) ? '__Host-' : ''}dy_${kind}`;
  }

  read(req: Request, kind: CookieKind): string | undefined {
    return parseCookies(req.headers.cookie).get(this.nameOf(req, kind));
  }

  write(req: Request, res: Response, kind: CookieKind, value: string): void {
    res.append('Set-Cookie', serializeCookie(this.nameOf(req, kind), value, this.attributes(req, kind)));
  }

  clear(req: Request, res: Response, kind: CookieKind): void {
    res.append('Set-Cookie', serializeCookie(this.nameOf(req, kind), '', { ...this.attributes(req, kind), maxAge: 0 }));
  }

  private attributes(req: Request, kind: CookieKind): CookieAttributes {
    return { httpOnly: true, secure: this.isSecure(req), sameSite: kind === 'sso' ? 'Lax' : 'Strict', path: '/' };
  }
}
